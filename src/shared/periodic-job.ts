import { StorageUnavailableError } from './outages.js'

export interface PeriodicJobOptions {
  intervalMs: number
  onError?: (error: unknown) => void
  runAtStart?: boolean
  /**
   * Waits (ms) before each quiet retry of a run that storage was unavailable for: a store slow to
   * answer while several instances start on a loaded machine answers a few seconds later, and
   * nothing needs saying. `onError` hears of the outage only when the last retry fails too; any
   * other error at once. None: no retry (the next run tries again).
   */
  outageRetriesMs?: readonly number[]
}

/**
 * A background job of the app run on a timer (order expiry, usage retention, the idempotency
 * sweep): one run at a time (a run still going when the timer fires is joined, not doubled), an
 * error handed to `onError` and the next run tries again, an unref'd timer (it never holds the
 * process open), and a stop that waits for the run in flight so that nothing touches the store
 * after it closes (a retry's wait ends at once then).
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<number> | undefined
  private stopped = false
  /** Ends the wait before a retry, when stop() is called during it. */
  private wake: (() => void) | undefined

  constructor(
    /** One run; resolves with how many things it did (rows deleted, orders expired). */
    private readonly work: () => Promise<number>,
    private readonly options: PeriodicJobOptions,
  ) {}

  start(): void {
    if (this.timer !== undefined) return
    this.stopped = false
    this.timer = setInterval(() => void this.run(), this.options.intervalMs)
    this.timer.unref()
    if (this.options.runAtStart === true) void this.run()
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    this.stopped = true
    this.wake?.()
    await this.running
  }

  /** One run, or the one in flight: what it did (never rejects; an error goes to onError and counts 0). */
  run(): Promise<number> {
    this.running ??= this.attempts()
      .catch((error: unknown) => {
        this.options.onError?.(error)
        return 0
      })
      .finally(() => {
        this.running = undefined
      })
    return this.running
  }

  /** The work, tried again after each of `outageRetriesMs` while storage is unavailable (until a stop). */
  private async attempts(): Promise<number> {
    const waits = [...(this.options.outageRetriesMs ?? [])]
    for (;;) {
      try {
        return await this.work()
      } catch (error) {
        const wait = waits.shift()
        if (!(error instanceof StorageUnavailableError) || wait === undefined || this.stopped) throw error
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait)
          timer.unref()
          this.wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        this.wake = undefined
        if (this.stopped) throw error
      }
    }
  }
}
