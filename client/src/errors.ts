import { type components, errorCodeValues } from './schema.js'

/** The closed list of error codes the service sends (from its OpenAPI document). */
export type ErrorCode = components['schemas']['Error']['code']
export const ERROR_CODES: readonly ErrorCode[] = errorCodeValues

export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value)

interface FailureDetails {
  /** The X-Request-Id of the last attempt (the server's echo, else the one the client sent). */
  requestId: string | undefined
  /** HTTP requests sent for this call (0: refused locally, without a request). */
  attempts: number
  cause?: unknown
}

/** Every error this client throws (besides the caller's own abort reason and TypeErrors for bad arguments). */
export abstract class AnimalStoreError extends Error {
  readonly requestId: string | undefined
  readonly attempts: number
  constructor(message: string, details: FailureDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.requestId = details.requestId
    this.attempts = details.attempts
  }
}

/** The service answered with an Error body: `{ code, message, status }`. */
export class ApiError extends AnimalStoreError {
  override readonly name = 'ApiError'
  readonly status: number
  readonly code: ErrorCode
  /** When a retry may pass, as the server said: Retry-After (429, 503, 409), or X-RateLimit-Reset for a 429 without it. */
  readonly retryAt: Date | undefined

  constructor(body: { code: ErrorCode; message: string; status: number }, details: FailureDetails & { retryAt?: Date | undefined }) {
    super(body.message, details)
    this.status = body.status
    this.code = body.code
    this.retryAt = details.retryAt
  }

  /** Milliseconds from `now` until retryAt (0 when it has passed); undefined without retryAt. */
  retryAfterMs(now = Date.now()): number | undefined {
    return this.retryAt === undefined ? undefined : Math.max(0, this.retryAt.getTime() - now)
  }
}

/** No answer: the connection failed or dropped, or the attempt ran out of time (`timedOut`). */
export class NetworkError extends AnimalStoreError {
  override readonly name = 'NetworkError'
  constructor(
    message: string,
    readonly timedOut: boolean,
    details: FailureDetails,
  ) {
    super(message, details)
  }
}

/** An answer that is not the service's: a non-JSON body, an unknown error code, a 502 from a proxy... */
export class UnexpectedResponseError extends AnimalStoreError {
  override readonly name = 'UnexpectedResponseError'
  constructor(
    message: string,
    readonly status: number,
    details: FailureDetails,
  ) {
    super(message, details)
  }
}
