import type { Clock } from '../shared/clock.js'
import type { Granularity } from './counts.js'
import type { UsageRepository } from './repository.js'

/** Rows one DELETE removes: a statement never holds locks or the SQLite writer for long. */
export const RETENTION_BATCH = 1000
/** Statements per table per run; what is left is deleted by the next run. */
const MAX_BATCHES_PER_RUN = 100

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
  private timer: NodeJS.Timeout | undefined
  private running: Promise<number> | undefined

  constructor(
    private readonly usage: Pick<UsageRepository, 'deleteBefore'>,
    private readonly options: UsageRetentionOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.run(), this.options.intervalMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.running
  }

  /** One run: the rows deleted (never rejects; an error goes to onError). */
  run(): Promise<number> {
    this.running ??= this.sweep().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async sweep(): Promise<number> {
    const now = this.options.clock.now()
    let deleted = 0
    try {
      for (const granularity of ['minute', 'hour'] as const) {
        const before = now - this.options.keep[granularity]
        for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
          const n = await this.usage.deleteBefore(granularity, before, RETENTION_BATCH)
          deleted += n
          if (n < RETENTION_BATCH) break
        }
      }
    } catch (error) {
      this.options.onError?.(error)
    }
    return deleted
  }
}
