/**
 * The two outages every layer may meet: thrown by a store or the limiter, answered 503 by the
 * HTTP error handler, reported by the CLI. Here, so that neither end imports the other.
 */

/**
 * Thrown by a store when its engine is unreachable; the HTTP layer answers 503 with its own text.
 * The message names the cause (`storage unavailable: timeout expired`) for logs, the CLI and a
 * failing test's output, which print the message but not the cause (a CI run showed only
 * "storage unavailable").
 */
export class StorageUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`storage unavailable: ${describeCause(cause)}`, { cause })
    this.name = 'StorageUnavailableError'
  }
}

/** An error's message, else its code, else its first inner error's (Node's AggregateError of a failed connect has no message). */
function describeCause(cause: unknown, depth = 0): string {
  const e = cause as { message?: unknown; code?: unknown; errors?: unknown } | null
  if (typeof e?.message === 'string' && e.message !== '') return e.message
  if (typeof e?.code === 'string') return e.code
  if (Array.isArray(e?.errors) && e.errors.length > 0 && depth < 3) return describeCause(e.errors[0], depth + 1)
  return String(cause)
}

/** Thrown when the limiter cannot decide and the configured policy is to fail closed (503). */
export class LimiterUnavailableError extends Error {
  constructor(cause?: unknown) {
    super('rate limiter unavailable', { cause })
    this.name = 'LimiterUnavailableError'
  }
}

/**
 * What keeps a store from writing (or reading) what it holds, whoever asks: its disk is full, the
 * disk or file fails (I/O error), a page is corrupt, or the database is read-only (a read-only
 * file or mount, a standby). Retrying later may succeed (space is freed, a failover completes).
 */
export type StorageFault = 'disk_full' | 'io_error' | 'corrupt' | 'read_only'

const FAULT_TEXT: Record<StorageFault, string> = {
  disk_full: 'the database is full',
  io_error: 'the database had an I/O error',
  corrupt: 'the database is corrupt',
  read_only: 'the database is read-only',
}

/**
 * A storage outage of the store itself rather than of the way to it: answered 503 like any other,
 * and remembered by the store, whose readiness says so until a write goes through again. The
 * message (for logs and the CLI, never an HTTP answer) keeps the engine's own.
 */
export class StorageFaultError extends StorageUnavailableError {
  constructor(
    readonly fault: StorageFault,
    cause: unknown,
  ) {
    super(cause)
    this.name = 'StorageFaultError'
    this.message = `${FAULT_TEXT[fault]}: ${describeCause(cause)}`
  }
}
