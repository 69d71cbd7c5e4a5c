import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Static, Type } from 'typebox'
import type { AddressRefusals } from '../auth/address-refusals.js'
import type { ChangeContext } from '../changes/audit-log.js'
import { parseJsonBody } from '../http/json-body.js'
import type { KeyAdministration, LeakReport } from '../keys/administration.js'
import { looksLikeApiKey } from '../keys/api-key.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import { type GithubPublicKeys, isSignedByGithub } from './github-keys.js'
import { ABANDONED_CLAIM_MS, decodeLabels, encodeLabels, type Label, reportHash } from './reports.js'
import type { ScanReportRepository } from './repository.js'

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
  /** The reports acted on already, shared by every instance: a copy is answered, not acted on again. */
  reports: ScanReportRepository
  /** What the route refuses counts against the client address (auth/address-refusals.ts). */
  refusals: AddressRefusals
  clock: Clock
}

const SCANNER: ChangeContext['actor'] = { type: 'secret_scanner', id: 'github' }
const HEADERS_REQUIRED = 'Github-Public-Key-Identifier and Github-Public-Key-Signature are required'
const UNKNOWN_KEY = 'Github-Public-Key-Identifier names no configured GitHub public key'
const BAD_SIGNATURE = 'The signature is not valid for this body by any configured GitHub public key'
const NO_BODY = Buffer.alloc(0)

/**
 * GitHub's secret scanning partner program: GitHub finds one of our keys in a public repository,
 * gist, issue or npm package and posts it here, signed. Each token that is one of our keys is
 * revoked or flagged (SECRET_SCANNING_ACTION), on record as done by `secret_scanner`/`github` with
 * the URL; the answer labels each token `true_positive` (one of our keys, in any state) or
 * `false_positive`, as GitHub asks. A public route (GitHub has no key of ours) that is not in the
 * API's document: it is GitHub's contract, not our clients'. Registered only when configured;
 * otherwise its path is 404 like any other.
 *
 * Nothing of a body is parsed before its signature is verified over its bytes, and what is
 * refused (no signature headers, an unknown key identifier, a wrong signature, a copy of a report)
 * counts against the client address, which is then answered 429 and banned as any keyless flood
 * (auth/address-refusals.ts). A report GitHub signed is acted on once: a copy of its bytes within a
 * day is answered as the first one was, from the store (reports.ts), with no audit entry and no action.
 */
export function registerSecretScanning(app: FastifyInstance, options: SecretScanningOptions): void {
  const { keys, refusals } = options
  app.post(
    GITHUB_SCANNING_PATH,
    {
      config: { public: true, rawBody: true },
      schema: { hide: true, body: GithubReport },
      // Before the body is read: an address refused already, and what the headers alone refuse.
      onRequest: async (request, reply) => {
        await refusals.precheck(request, reply)
        const refused = headersProblem(request, keys)
        if (refused !== undefined) throw await refusals.refuse(request, reply, refused)
      },
      // The bytes read (up to the body limit), not parsed yet: the signature, then the parse.
      preValidation: async (request, reply) => {
        const [identifier, signature] = signatureHeaders(request) as [string, string]
        const body = request.rawBody ?? NO_BODY
        if (!isSignedByGithub(keys, identifier, signature, body))
          throw await refusals.refuse(request, reply, new ApiError('unauthorized', BAD_SIGNATURE))
        request.body = parseJsonBody(body)
      },
    },
    (request, reply) => answer(request, reply, options),
  )
}

function signatureHeaders(request: FastifyRequest): [unknown, unknown] {
  return [request.headers['github-public-key-identifier'], request.headers['github-public-key-signature']]
}

function headersProblem(request: FastifyRequest, keys: GithubPublicKeys): ApiError | undefined {
  const [identifier, signature] = signatureHeaders(request)
  if (typeof identifier !== 'string' || typeof signature !== 'string') return new ApiError('unauthorized', HEADERS_REQUIRED)
  if (!keys.has(identifier)) return new ApiError('unauthorized', UNKNOWN_KEY)
  return undefined
}

async function answer(request: FastifyRequest, reply: FastifyReply, options: SecretScanningOptions) {
  const { reports, refusals, clock } = options
  const found = request.body as GithubReport
  const hash = reportHash(request.rawBody ?? NO_BODY)
  const now = clock.now()
  const claim = await reports.claimReport(hash, now, now - ABANDONED_CLAIM_MS)
  if (claim.outcome !== 'claimed') {
    // GitHub repeats a report rarely; a replay is a refusal in all but its answer.
    const limited = await refusals.count(request, reply)
    if (limited !== undefined) throw limited
    if (claim.outcome === 'in_flight')
      throw new ApiError('idempotency_conflict', 'This report is being acted on by another request; retry shortly', { 'retry-after': 1 })
    return answersTo(found, decodeLabels(claim.labels))
  }
  let labels: Label[]
  try {
    labels = await actOn(found, options, { actor: SCANNER, requestId: request.id })
  } catch (error) {
    // Not acted on in full: its next copy is acted on (a key already revoked stays so).
    await reports.releaseReport(hash).catch(() => {})
    throw error
  }
  await reports.answerReport(hash, encodeLabels(labels)).catch((error: unknown) => {
    // Acted on all the same, so answered: only a copy after ABANDONED_CLAIM_MS is acted on again.
    request.log.warn({ err: error }, 'recording a secret scanning report as answered failed')
  })
  return answersTo(found, labels)
}

/** Revokes or flags each token that is one of our keys; its label. */
async function actOn(found: GithubReport, options: SecretScanningOptions, ctx: ChangeContext): Promise<Label[]> {
  const labels: Label[] = []
  for (const { token, url, source } of found) {
    const view = looksLikeApiKey(token)
      ? await options.admin.reportLeak(token, { action: options.action, url, source: source ?? null }, ctx)
      : undefined
    labels.push(view === undefined ? 'false_positive' : 'true_positive')
  }
  return labels
}

const answersTo = (found: GithubReport, labels: readonly Label[]) =>
  found.map(({ token, type }, i) => ({ token_raw: token, token_type: type, label: labels[i] ?? 'false_positive' }))
