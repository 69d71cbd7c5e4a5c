/**
 * What the recorders that keep storage writes off the request path (last-used times, usage
 * history) share: their batch is written every `flushMs`, when asked, and once more on stop, one
 * write at a time. A subclass's `write` must not reject: it keeps what it could not store for the
 * next one.
 */
export abstract class BatchWriter {
  private timer: NodeJS.Timeout | undefined
  private queue: Promise<void> | undefined

  constructor(private readonly flushMs: number) {}

  /** Writes the batch pending now. */
  protected abstract write(): Promise<void>

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushMs)
    this.timer.unref()
  }

  /** Writes everything pending now (one batch); never rejects. Flushes run one at a time. */
  flush(): Promise<void> {
    this.queue = (this.queue ?? Promise.resolve()).then(() => this.write())
    return this.queue
  }

  /** Stops the timer and writes what is pending (before the store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flush()
  }
}
