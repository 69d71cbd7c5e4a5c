import { BatchWriter } from '../shared/batch-writer.js'
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
export class LastUsedRecorder extends BatchWriter {
  private pending = new Map<string, number>()
  /** The batch being written: still "pending" for readers until it is stored. */
  private writing: Map<string, number> | undefined

  constructor(
    private readonly keys: Pick<KeyRepository, 'recordLastUsed'>,
    private readonly options: LastUsedOptions,
  ) {
    super(options.flushMs)
  }

  /** The request path: one Map set. */
  touch(id: string, at: number): void {
    this.pending.set(id, at)
  }

  /** The latest time not yet stored, if any. */
  pendingFor(id: string): number | undefined {
    return this.pending.get(id) ?? this.writing?.get(id)
  }

  protected async write(): Promise<void> {
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
