/**
 * The two outages every layer may meet: thrown by a store or the limiter, answered 503 by the
 * HTTP error handler, reported by the CLI. Here, so that neither end imports the other.
 */

/** Thrown by a store when its engine is unreachable; the HTTP layer answers 503. */
export class StorageUnavailableError extends Error {
  constructor(cause: unknown) {
    super('storage unavailable', { cause })
    this.name = 'StorageUnavailableError'
  }
}

/** Thrown when the limiter cannot decide and the configured policy is to fail closed (503). */
export class LimiterUnavailableError extends Error {
  constructor(cause?: unknown) {
    super('rate limiter unavailable', { cause })
    this.name = 'LimiterUnavailableError'
  }
}
