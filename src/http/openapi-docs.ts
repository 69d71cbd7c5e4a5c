import { BODY_LIMIT_TEXT } from '../shared/body-limit.js'
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from '../shared/errors.js'

/** OpenAPI fragments shared by the route schemas: the headers every response carries, and errors. */
export const rateLimitHeaderDocs = {
  'X-RateLimit-Limit': {
    type: 'integer',
    description: 'Requests allowed in the tightest window (minute or UTC day: the one with fewer requests left).',
  },
  'X-RateLimit-Remaining': {
    type: 'integer',
    description:
      "Requests left in that window after this one: limit − n − 1 for the request's admission number n, exact in admission order (across instances, an instance may answer from numbers it reserved earlier: docs/limits.md); 0 on a 429 (also during a ban).",
  },
  'X-RateLimit-Reset': {
    type: 'integer',
    description:
      "Unix seconds when that window resets; on a 429, when a request can pass again (the later of the ban's end and the reset of every exhausted window).",
  },
  'RateLimit-Policy': {
    type: 'string',
    description: 'IETF draft: `"minute";q=<limit>;w=60, "day";q=<limit>;w=86400` (the same on every response).',
  },
  RateLimit: {
    type: 'string',
    description:
      'IETF draft: each window\'s real remaining (r) and seconds to its reset (t), e.g. "minute";r=59;t=30, "day";r=999;t=43170. During a ban the windows keep their real counts and one more item describes the ban: `"ban";r=0;t=<seconds to its end>`.',
  },
  'X-Request-Id': { type: 'string', description: 'Request id (echoed when the client sent a safe one); quote it in support requests.' },
} as const

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request: a parameter or body field is missing or invalid; the message names it.',
  401: 'Missing, invalid or expired API key.',
  403: 'The credential may not make this call.',
  404: 'The requested animal or order could not be found.',
  409: 'The request conflicts with the state of the resource (or of an earlier request).',
  410: 'The operation is past its sunset date.',
  413: `Request body larger than ${BODY_LIMIT_TEXT}.`,
  415: 'Request body is not application/json.',
  422: 'The request is well-formed but cannot be processed.',
  429: 'Rate limit exceeded (code rate_limited) or temporary ban (code key_banned); see Retry-After.',
  500: 'Unexpected error; nothing internal is disclosed.',
  503: 'A dependency is unavailable or the server is shutting down.',
}

/** What an answer's message says, for the examples of the document (else the code's description). */
const EXAMPLE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_request: 'petId must be an int64 integer (-2^63 to 2^63-1) written in plain decimal',
  forbidden_role: 'This admin token has the role read: it may read but not change (POST /admin/v1/keys)',
  insufficient_scope: 'This API key lacks the scope pets:write that POST /v1/pets needs; its scopes: pets:read orders:read',
  not_found: 'No order with id 42',
  pet_not_available: 'Animal 1 is not available: it is pending',
  order_not_placed: 'Order 1 cannot be completed: it is expired',
  unknown_pet: 'petId 42 names no animal',
}

/** One example Error body per code (the media type's named examples: "Try it out" and readers see each code). */
const errorExamples = (codes: ErrorCode[]) =>
  Object.fromEntries(
    codes.map((code) => [
      code,
      { summary: code, value: { code, message: EXAMPLE_MESSAGES[code] ?? ERROR_DESCRIPTIONS[code], status: ERROR_STATUS[code] } },
    ]),
  )

function codesFor(status: number): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) => ERROR_STATUS[c] === status)
}

/**
 * The error responses of an operation: a status documents every code of that status; a code, only
 * that one (409 is `idempotency_conflict` on createPet, `conflict` on the admin API); codes of one
 * status given one by one are documented together.
 */
export function errorResponses(...answers: Array<number | ErrorCode>): Record<number, object> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const answer of answers) {
    const status = typeof answer === 'number' ? answer : ERROR_STATUS[answer]
    const codes = typeof answer === 'number' ? codesFor(status) : [answer]
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), ...codes])])
  }
  const out: Record<number, object> = {}
  for (const [status, codes] of byStatus) {
    const headers: Record<string, object> = { ...rateLimitHeaderDocs }
    if (status === 429) {
      headers['Retry-After'] = {
        type: 'integer',
        description:
          "Seconds until a request can pass: the exhausted window's reset, or the ban's end (later when a window is still exhausted then).",
      }
    }
    if (codes.includes('idempotency_conflict'))
      headers['Retry-After'] = {
        type: 'integer',
        description: `Seconds to wait before retrying (1)${codes.length > 1 ? ': present on idempotency_conflict only' : ''}.`,
      }
    if (status === 401) headers['WWW-Authenticate'] = { type: 'string', description: 'Bearer challenge (RFC 6750).' }
    if (codes.includes('insufficient_scope'))
      headers['WWW-Authenticate'] = {
        type: 'string',
        description:
          'Bearer challenge naming the scope needed (RFC 6750 section 3.1): `Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"`.',
      }
    out[status] = {
      description: `${STATUS_TEXT[status] ?? ''} Codes: ${codes.map((c) => `\`${c}\` (${ERROR_DESCRIPTIONS[c]})`).join('; ')}`,
      // The media type written out (rather than a bare $ref) to carry the examples; Fastify serializes by it as well.
      content: { 'application/json': { schema: { $ref: 'Error#' }, examples: errorExamples(codes) } },
      headers,
    }
  }
  return out
}

/** The strong ETag of a conditional read's 200 and 304 (http/conditional-reads.ts). */
export const etagHeaderDoc = {
  ETag: {
    type: 'string',
    description:
      'Strong, opaque entity tag of this answer (quoted): it changes whenever the answer changes, is the same on every instance, and says nothing else of the answer. Send it back in `If-None-Match`: 304 while the answer is unchanged, without counting against the quota.',
  },
} as const

/** The request header of a conditional read, as a route's `headers` schema. */
export const ifNoneMatchHeaders = {
  type: 'object',
  properties: {
    'If-None-Match': {
      type: 'string',
      description:
        'Entity tags of answers the client holds (`"…"`, `W/"…"`, comma-separated, or `*`). When one is the current ETag the answer is 304 without a body, ' +
        'which does not count against the minute and day limits, up to a budget of conditional requests (10 times those limits), beyond which they count as any request. ' +
        '`*` (any current answer) is answered 304 too, but counts as any request: it names no answer held.',
    },
  },
} as const

/** The 304 of a conditional read: no body (`type: 'null'` makes the document show no content). */
export const notModifiedResponse = {
  304: {
    type: 'null',
    description:
      'Not Modified: `If-None-Match` names the current ETag (or is `*`). No body. Not counted against the quota when it named the ETag (within the conditional budget): the rate-limit headers show the windows as this request found them.',
    headers: { ...rateLimitHeaderDocs, ...etagHeaderDoc },
  },
} as const
