/**
 * A background job of the app run on a timer (order expiry, usage retention, the idempotency
 * sweep): one run at a time (a run still going when the timer fires is joined, not doubled), an
 * error handed to `onError` and the next run tries again, an unref'd timer (it never holds the
 * process open), and a stop that waits for the run in flight so that nothing touches the store
 * after it closes.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<number> | undefined

  constructor(
    /** One run; resolves with how many things it did (rows deleted, orders expired). */
    private readonly work: () => Promise<number>,
    private readonly options: { intervalMs: number; onError?: (error: unknown) => void; runAtStart?: boolean },
  ) {}

  start(): void {
    if (this.timer !== undefined) return
    this.timer = setInterval(() => void this.run(), this.options.intervalMs)
    this.timer.unref()
    if (this.options.runAtStart === true) void this.run()
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    await this.running
  }

  /** One run, or the one in flight: what it did (never rejects; an error goes to onError and counts 0). */
  run(): Promise<number> {
    this.running ??= this.work()
      .catch((error: unknown) => {
        this.options.onError?.(error)
        return 0
      })
      .finally(() => {
        this.running = undefined
      })
    return this.running
  }
}
