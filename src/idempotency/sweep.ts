import type { Clock } from '../shared/clock.js'
import { PeriodicJob } from '../shared/periodic-job.js'

/** Records are kept at least this long, then deleted by the sweep. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
/** How often each instance deletes expired records (a record lives at most retention + this). */
export const IDEMPOTENCY_SWEEP_MS = 10 * 60 * 1000

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
  ) {
    this.job = new PeriodicJob(() => this.records.deleteIdempotencyRecords(this.clock.now() - IDEMPOTENCY_RETENTION_MS), {
      intervalMs: IDEMPOTENCY_SWEEP_MS,
      onError,
      runAtStart: true,
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
