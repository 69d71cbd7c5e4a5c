import { BODY_LIMIT_TEXT } from './body-limit.js'
import { redactKeys } from './key-redaction.js'

/**
 * The closed list of error codes. Every error the service sends carries one of these, with the
 * HTTP status fixed here and nowhere else. The OpenAPI document's error table and Error enum are
 * built from it; the table in docs/api.md is kept in step by hand (test/http/openapi-document.test.ts
 * compares it with the document).
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  key_expired: 401,
  forbidden_role: 403,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  idempotency_conflict: 409,
  pet_not_available: 409,
  order_not_placed: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  unknown_pet: 422,
  headers_too_large: 431,
  rate_limited: 429,
  key_banned: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_request: 'The request is malformed: a parameter or body field is missing or invalid (the message names it).',
  unauthorized: 'The API key is missing, malformed, unknown or revoked.',
  key_expired:
    'The API key has expired (its expiry date passed, or it was rotated and its grace period is over); use its successor or a new key.',
  forbidden_role:
    'Admin API only: the admin token has the role `read`, which may read (keys, usage, the audit log, orders) but not change; the message names the role and the operation.',
  insufficient_scope:
    'The API key lacks the scope the operation needs (RFC 6750 section 3.1; `WWW-Authenticate` names it): nothing was done, and the request counts against the quota like any other.',
  not_found: 'The route, or the requested animal or order, does not exist (an order of another customer does not exist for you).',
  method_not_allowed: 'The path exists but not for this method; see the Allow header.',
  request_timeout: 'The client took too long to send its request.',
  conflict:
    "The change conflicts with the resource's state: the key is revoked, or was rotated (change its successor), or has expired (rotation).",
  idempotency_conflict: 'A request with the same Idempotency-Key is still being processed; retry after Retry-After seconds.',
  pet_not_available:
    'The animal cannot be ordered: it is pending (held by another order), sold, or has no status (not for sale); the message names its status.',
  order_not_placed: 'The order can no longer change: it is cancelled, completed or expired; the message names its status.',
  gone: 'The operation has passed its sunset date and was removed.',
  payload_too_large: `The request body is larger than ${BODY_LIMIT_TEXT}.`,
  unsupported_media_type: 'The request body is not application/json.',
  idempotency_key_reused: 'The Idempotency-Key was already used with a different request body (or on another operation).',
  unknown_pet: 'The request body names an animal (petId) that does not exist.',
  headers_too_large: 'The request headers are too large or too many.',
  rate_limited: 'A rate-limit window is exhausted; retry after Retry-After seconds.',
  key_banned: 'The key (or client address) kept sending while limited and is temporarily banned; retry after Retry-After seconds.',
  internal_error: 'An unexpected error on our side. Nothing internal is disclosed; quote the X-Request-Id.',
  service_unavailable: 'A dependency (database or rate-limit store) is unavailable, or the server is shutting down.',
}

/**
 * An answer to send, not a failure to debug: made without a stack trace. Capturing one (the
 * Error constructor walks the whole stack, Fastify's hooks included) was the largest single cost
 * of a refused request, 10-17 µs of it under a flood (docs/limits.md, "What one client can do to
 * the others"). Nothing reads an ApiError's stack: an unexpected failure is logged as itself.
 */
export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string | number> = {},
  ) {
    const stackTraceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    // Whatever a message quotes (a query parameter's name, a path), it never carries a secret.
    super(redactKeys(message))
    Error.stackTraceLimit = stackTraceLimit
    this.name = 'ApiError'
    this.status = ERROR_STATUS[code]
  }

  /** The answer's body: the `Error` schema of `error-body.ts`. */
  toBody(): { code: ErrorCode; message: string; status: number } {
    return { code: this.code, message: this.message, status: this.status }
  }
}
