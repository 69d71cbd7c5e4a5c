import type { KeyRepository } from './repository.js'

export interface LastUsedOptions {
  flushMs: number
  onError?: (error: unknown) => void
}

/**
 * When each key was last used, without a storage write per request: the guard records key id ->
 * time in a Map (one set per request), and every `flushMs` all pending times are written in one
 * statement or transaction, and once more on stop(). Readers in this process (the key service)
 * take the later of stored and pending. A failed flush keeps its times for the next one.
 */
export class LastUsedRecorder {
  private pending = new Map<string, number>()
  /** The batch being written: still "pending" for readers until it is stored. */
  private writing: Map<string, number> | undefined
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> | undefined

  constructor(
    private readonly keys: Pick<KeyRepository, 'recordLastUsed'>,
    private readonly options: LastUsedOptions,
  ) {}

  /** The request path: one Map set. */
  touch(id: string, at: number): void {
    this.pending.set(id, at)
  }

  /** The latest time not yet stored, if any. */
  pendingFor(id: string): number | undefined {
    return this.pending.get(id) ?? this.writing?.get(id)
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushMs)
    this.timer.unref()
  }

  /** Writes everything pending now (one batch); never rejects. Flushes run one at a time. */
  flush(): Promise<void> {
    this.flushing = (this.flushing ?? Promise.resolve()).then(() => this.write())
    return this.flushing
  }

  /** Stops the timer and writes what is pending (before the store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flush()
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    this.writing = batch
    try {
      await this.keys.recordLastUsed(batch)
    } catch (error) {
      // Kept for the next flush, unless a later use has been recorded since.
      for (const [id, at] of batch) if ((this.pending.get(id) ?? 0) < at) this.pending.set(id, at)
      this.options.onError?.(error)
    } finally {
      this.writing = undefined
    }
  }
}
