import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Static, Type } from 'typebox'
import type { ChangeContext, KeyAdministration, LeakReport } from '../keys/administration.js'
import { looksLikeApiKey } from '../keys/api-key.js'
import { ApiError } from '../shared/errors.js'
import { type GithubPublicKeys, isSignedByGithub } from './github-keys.js'

/** Where GitHub posts what it found: on the main listener, the one GitHub can reach (docs/operations.md). */
export const GITHUB_SCANNING_PATH = '/v1/secret-scanning/github'

/** One match GitHub found: the token, the type of ours it matched, where, and in what. Fields GitHub may add are allowed. */
const FoundToken = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 1000 }),
    type: Type.String({ maxLength: 200 }),
    url: Type.String({ maxLength: 2000 }),
    source: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
)
const GithubReport = Type.Array(FoundToken, { minItems: 1, maxItems: 100 })
type GithubReport = Static<typeof GithubReport>

export interface SecretScanningOptions {
  keys: GithubPublicKeys
  admin: Pick<KeyAdministration, 'reportLeak'>
  action: LeakReport['action']
}

const SCANNER: ChangeContext['actor'] = { type: 'secret_scanner', id: 'github' }

/**
 * GitHub's secret scanning partner program: GitHub finds one of our keys in a public repository,
 * gist, issue or npm package and posts it here, signed. Each token that is one of our keys is
 * revoked or flagged (SECRET_SCANNING_ACTION), on record as done by `secret_scanner`/`github` with
 * the URL; the answer labels each token `true_positive` (one of our keys, in any state) or
 * `false_positive`, as GitHub asks. A public route (GitHub has no key of ours) that is not in the
 * API's document: it is GitHub's contract, not our clients'. Registered only when configured;
 * otherwise its path is 404 like any other.
 */
export function registerSecretScanning(app: FastifyInstance, options: SecretScanningOptions): void {
  app.post(
    GITHUB_SCANNING_PATH,
    {
      config: { public: true, rawBody: true },
      schema: { hide: true, body: GithubReport },
      // Before validation: an unsigned body is refused whatever it holds, and nothing is read from it.
      preValidation: async (request) => verify(request, options.keys),
    },
    async (request) => {
      const ctx: ChangeContext = { actor: SCANNER, requestId: request.id }
      const answers = []
      for (const found of request.body as GithubReport) {
        const view = looksLikeApiKey(found.token)
          ? await options.admin.reportLeak(found.token, { action: options.action, url: found.url, source: found.source ?? null }, ctx)
          : undefined
        answers.push({ token_raw: found.token, token_type: found.type, label: view === undefined ? 'false_positive' : 'true_positive' })
      }
      return answers
    },
  )
}

function verify(request: FastifyRequest, keys: GithubPublicKeys): void {
  const identifier = request.headers['github-public-key-identifier']
  const signature = request.headers['github-public-key-signature']
  if (typeof identifier !== 'string' || typeof signature !== 'string')
    throw new ApiError('unauthorized', 'Github-Public-Key-Identifier and Github-Public-Key-Signature are required')
  if (request.rawBody === undefined || !isSignedByGithub(keys, identifier, signature, request.rawBody))
    throw new ApiError('unauthorized', 'The signature is not valid for this body by any configured GitHub public key')
}
