import { ApiError } from '../shared/errors.js'

/** 409 idempotency_conflict: the first request with this key is still being processed. */
export const inFlightError = () =>
  new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry shortly', { 'retry-after': 1 })

/**
 * The requests under an Idempotency-Key this process is handling now: a second one with the same
 * scope and key is refused (409) until the first ends.
 *
 * "In flight" is not a stored state: a stored in-flight row would outlive a crash and block every
 * retry until some lease ran out. Instead, the record is written only in the transaction that makes
 * the change, and a request in flight is one this process is handling (this set) or, on
 * PostgreSQL, one whose transaction holds the key's advisory lock in another instance (the store
 * answers `in_flight`).
 */
export class InFlight {
  private readonly slots = new Set<string>()

  /** Runs `work` as the one request of (scope, key) in this process; throws inFlightError while another is. */
  async run<T>(scope: string, key: string, work: () => Promise<T>): Promise<T> {
    const slot = `${scope}\n${key}`
    if (this.slots.has(slot)) throw inFlightError()
    this.slots.add(slot)
    try {
      return await work()
    } finally {
      this.slots.delete(slot)
    }
  }
}
