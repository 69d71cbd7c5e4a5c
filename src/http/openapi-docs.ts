import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from './errors.js'

/** OpenAPI fragments shared by the route schemas: the headers every response carries, and errors. */
export const rateLimitHeaderDocs = {
  'X-RateLimit-Limit': { type: 'integer', description: 'Requests allowed in the tightest window (minute or UTC day).' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in that window.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix seconds when that window resets (or the ban ends).' },
  'RateLimit-Policy': { type: 'string', description: 'IETF draft: "minute";q=<limit>;w=60, "day";q=<limit>;w=86400.' },
  RateLimit: { type: 'string', description: 'IETF draft: remaining (r) and seconds to reset (t) of each window.' },
  'X-Request-Id': { type: 'string', description: 'Request id (echoed when the client sent a safe one); quote it in support requests.' },
} as const

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request: a parameter or body field is missing or invalid; the message names it.',
  401: 'Missing or invalid API key.',
  404: 'The requested animal could not be found.',
  409: 'A request with the same Idempotency-Key is still in flight.',
  410: 'The operation is past its sunset date.',
  413: 'Request body larger than 16 KiB.',
  415: 'Request body is not application/json.',
  422: 'The Idempotency-Key was already used with another body.',
  429: 'Rate limit exceeded (code rate_limited) or temporary ban (code key_banned); see Retry-After.',
  500: 'Unexpected error; nothing internal is disclosed.',
  503: 'A dependency is unavailable or the server is shutting down.',
}

function codesFor(status: number): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) => ERROR_STATUS[c] === status)
}

export function errorResponses(...statuses: number[]): Record<number, object> {
  const out: Record<number, object> = {}
  for (const status of statuses) {
    const codes = codesFor(status)
    const headers: Record<string, object> = { ...rateLimitHeaderDocs }
    if (status === 429 || status === 409) headers['Retry-After'] = { type: 'integer', description: 'Seconds to wait before retrying.' }
    if (status === 401) headers['WWW-Authenticate'] = { type: 'string', description: 'Bearer challenge (RFC 6750).' }
    out[status] = {
      description: `${STATUS_TEXT[status] ?? ''} Codes: ${codes.map((c) => `\`${c}\` (${ERROR_DESCRIPTIONS[c]})`).join('; ')}`,
      $ref: 'Error#',
      headers,
    }
  }
  return out
}
