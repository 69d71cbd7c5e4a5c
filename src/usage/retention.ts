import type { Clock } from '../shared/clock.js'
import { PeriodicJob } from '../shared/periodic-job.js'
import type { Granularity } from './counts.js'
import type { UsageRepository } from './repository.js'

/** Rows one DELETE removes: a statement never holds locks or the SQLite writer for long. */
export const RETENTION_BATCH = 1000
/** Statements per table per run; what is left is deleted by the next run. */
const MAX_BATCHES_PER_RUN = 100
/** How often each server deletes old rows (each run in batches). */
export const USAGE_RETENTION_INTERVAL_MS = 60_000

export interface UsageRetentionOptions {
  /** How long rows are kept, per granularity (ms). */
  keep: Record<Granularity, number>
  intervalMs: number
  clock: Clock
  onError?: (error: unknown) => void
}

/**
 * Deletes minute and hour rows older than their retention, in batches of RETENTION_BATCH rows, on a
 * timer. Every instance runs it; on a shared database the runs just find less to delete.
 */
export class UsageRetention {
  private readonly job: PeriodicJob

  constructor(
    private readonly usage: Pick<UsageRepository, 'deleteBefore'>,
    private readonly options: UsageRetentionOptions,
  ) {
    this.job = new PeriodicJob(() => this.sweep(), options)
  }

  start(): void {
    this.job.start()
  }

  stop(): Promise<void> {
    return this.job.stop()
  }

  /** One run: the rows deleted (never rejects; an error goes to onError). */
  run(): Promise<number> {
    return this.job.run()
  }

  private async sweep(): Promise<number> {
    const now = this.options.clock.now()
    let deleted = 0
    for (const granularity of ['minute', 'hour'] as const) {
      const before = now - this.options.keep[granularity]
      for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
        const n = await this.usage.deleteBefore(granularity, before, RETENTION_BATCH)
        deleted += n
        if (n < RETENTION_BATCH) break
      }
    }
    return deleted
  }
}
