import type { Clock } from '../shared/clock.js'
import { PeriodicJob } from '../shared/periodic-job.js'

/** Records are kept at least this long, then deleted by the sweep. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
/** How often each instance deletes expired records (a record lives at most retention + this). */
export const IDEMPOTENCY_SWEEP_MS = 10 * 60 * 1000
/**
 * The quiet retries of a sweep that storage did not answer (after 2 s, 10 s, 30 s): the sweep at
 * start meets a database still busy with every instance starting at once (three PostgreSQL
 * instances on a loaded machine each logged a "Query read timeout" with its stack). Still down
 * after them, the outage is logged once, and the next sweep tries again.
 */
export const IDEMPOTENCY_SWEEP_RETRIES_MS = [2_000, 10_000, 30_000] as const

/** Where the Idempotency-Key records are kept (one table, written by the pets' and the orders' stores). */
export interface IdempotencyRecords {
  /** Deletes the records created before `before` (epoch ms); resolves with how many. */
  deleteIdempotencyRecords(before: number): Promise<number>
}

/**
 * Deletes the records past IDEMPOTENCY_RETENTION_MS: at start, then every IDEMPOTENCY_SWEEP_MS (all
 * instances may: a delete is idempotent). A background job of the app, started and stopped by
 * app.ts with the others.
 */
export class IdempotencySweep {
  private readonly job: PeriodicJob

  constructor(
    private readonly records: IdempotencyRecords,
    private readonly clock: Clock,
    onError: (error: unknown) => void,
    { outageRetriesMs = IDEMPOTENCY_SWEEP_RETRIES_MS }: { outageRetriesMs?: readonly number[] } = {},
  ) {
    this.job = new PeriodicJob(() => this.records.deleteIdempotencyRecords(this.clock.now() - IDEMPOTENCY_RETENTION_MS), {
      intervalMs: IDEMPOTENCY_SWEEP_MS,
      onError,
      runAtStart: true,
      outageRetriesMs,
    })
  }

  /** Deletes the records past the retention; resolves with how many (never rejects: an error goes to onError). */
  run(): Promise<number> {
    return this.job.run()
  }

  start(): void {
    this.job.start()
  }

  /** Stops the timer and waits for a sweep in flight (the store closes after it). */
  stop(): Promise<void> {
    return this.job.stop()
  }
}
