import type { FastifyReply, FastifyRequest } from 'fastify'
import { type Static, Type } from 'typebox'
import type { AddressRefusals } from '../../auth/address-refusals.js'
import { parseJsonBody } from '../../http/json-body.js'
import { type GithubPublicKeys, headersRefusal, signatureRefusal } from '../../secret-scanning/github-keys.js'
import type { GithubReports } from '../../secret-scanning/github-reports.js'
import type { Label } from '../../secret-scanning/reports.js'
import { ApiError } from '../../shared/errors.js'
import type { PublicApp } from '../common/routes.js'

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
  reports: GithubReports
  /** What the route refuses counts against the client address (auth/address-refusals.ts). */
  refusals: AddressRefusals
}

const NO_BODY = Buffer.alloc(0)

/**
 * POST /secret-scanning/github, where GitHub posts the keys of ours it found (the rules:
 * secret-scanning/github-reports.ts). A public route (GitHub has no key of ours) that is not in the
 * API's document: it is GitHub's contract, not our clients'. Registered only when configured
 * (SECRET_SCANNING_PUBLIC_KEYS); otherwise its path is 404 like any other.
 *
 * Nothing of a body is parsed before its signature is verified over its bytes, and what is
 * refused (no signature headers, an unknown key identifier, a wrong signature, a copy of a report)
 * counts against the client address, which is then answered 429 and banned as any keyless flood
 * (auth/address-refusals.ts).
 */
export function githubSecretScanning(app: PublicApp, options: SecretScanningOptions): void {
  const { keys, refusals } = options
  app.post(
    '/secret-scanning/github',
    {
      config: { public: true, rawBody: true },
      schema: { hide: true, body: GithubReport },
      // Before the body is read: an address refused already, and what the headers alone refuse.
      onRequest: async (request, reply) => {
        await refusals.precheck(request, reply)
        const refused = headersRefusal(keys, ...signatureHeaders(request))
        if (refused !== undefined) throw await refusals.refuse(request, reply, refused)
      },
      // The bytes read (up to the body limit), not parsed yet: the signature, then the parse.
      preValidation: async (request, reply) => {
        const [identifier, signature] = signatureHeaders(request) as [string, string]
        const body = request.rawBody ?? NO_BODY
        const refused = signatureRefusal(keys, identifier, signature, body)
        if (refused !== undefined) throw await refusals.refuse(request, reply, refused)
        // Validated against GithubReport next, as any parsed body is.
        request.body = parseJsonBody(body) as GithubReport
      },
    },
    (request, reply) => answer(request, reply, options),
  )
}

function signatureHeaders(request: FastifyRequest): [unknown, unknown] {
  return [request.headers['github-public-key-identifier'], request.headers['github-public-key-signature']]
}

async function answer(request: FastifyRequest, reply: FastifyReply, { reports, refusals }: SecretScanningOptions) {
  const found = request.body as GithubReport
  const received = await reports.receive(request.rawBody ?? NO_BODY, found, request.id, (error) =>
    request.log.warn({ err: error }, 'recording a secret scanning report as answered failed'),
  )
  if (received.outcome === 'acted') return answersTo(found, received.labels)
  // GitHub repeats a report rarely; a replay is a refusal in all but its answer.
  const limited = await refusals.count(request, reply)
  if (limited !== undefined) throw limited
  if (received.outcome === 'in_flight')
    throw new ApiError('idempotency_conflict', 'This report is being acted on by another request; retry shortly', { 'retry-after': 1 })
  return answersTo(found, received.labels)
}

const answersTo = (found: GithubReport, labels: readonly Label[]) =>
  found.map(({ token, type }, i) => ({ token_raw: token, token_type: type, label: labels[i] ?? 'false_positive' }))
