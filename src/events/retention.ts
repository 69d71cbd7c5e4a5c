import type { Clock } from '../shared/clock.js'
import { PeriodicJob } from '../shared/periodic-job.js'
import type { EventRepository } from './event.js'

/** Events one transaction deletes: a batch never holds the SQLite writer or many row locks for long. */
export const EVENT_SWEEP_BATCH = 1000
/** Batches per run; what is left is deleted by the next run. */
const MAX_BATCHES_PER_RUN = 100
/** How often each server sweeps: an event lives at most this much longer than EVENT_RETENTION_DAYS. */
export const EVENT_SWEEP_MS = 10 * 60_000

/**
 * Deletes the events older than the retention (EVENT_RETENTION_DAYS), at start and then every
 * EVENT_SWEEP_MS, in batches. Every instance runs it: a delete of old rows is idempotent, and on
 * PostgreSQL instances sweeping at once skip each other's rows, so several never delete one twice
 * nor wait on each other.
 */
export class EventRetention {
  private readonly job: PeriodicJob

  constructor(
    private readonly events: Pick<EventRepository, 'deleteBefore'>,
    private readonly options: { keepMs: number; clock: Clock; intervalMs?: number; onError?: (error: unknown) => void },
  ) {
    this.job = new PeriodicJob(() => this.sweep(), {
      intervalMs: options.intervalMs ?? EVENT_SWEEP_MS,
      onError: options.onError,
      runAtStart: true,
    })
  }

  start(): void {
    this.job.start()
  }

  stop(): Promise<void> {
    return this.job.stop()
  }

  /** One run: how many events it deleted (never rejects; an error goes to onError, the next run tries again). */
  run(): Promise<number> {
    return this.job.run()
  }

  private async sweep(): Promise<number> {
    const before = this.options.clock.now() - this.options.keepMs
    let deleted = 0
    for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
      const n = await this.events.deleteBefore(before, EVENT_SWEEP_BATCH)
      deleted += n
      if (n < EVENT_SWEEP_BATCH) break
    }
    return deleted
  }
}
