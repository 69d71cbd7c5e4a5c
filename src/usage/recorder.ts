import { BatchWriter } from '../shared/batch-writer.js'
import {
  addCounts,
  bucketStart,
  COUNTERS,
  countsOf,
  decisionIndex,
  type LimitOutcome,
  MINUTE_MS,
  statusClassIndex,
  type UsageCounts,
} from './counts.js'
import type { UsageCell, UsageRepository } from './repository.js'

/**
 * The most (key, minute) cells held in memory, pending and being written together: about 100 bytes
 * each (a Map entry and a Float64Array of 6), so some 10 MB. Flushing every few seconds, a service
 * holds (keys used in the last flush interval) x (1 or 2 minutes); the bound is reached only when
 * storage refuses flushes for long. Past it, a request that would need a new cell is not counted
 * (and counted in `dropped`) rather than grow memory without end.
 */
export const MAX_PENDING_CELLS = 100_000

export interface UsageRecorderOptions {
  flushMs: number
  maxCells?: number
  onError?: (error: unknown) => void
  /** A request left uncounted at the bound (the metric animal_store_usage_dropped_total). */
  onDropped?: () => void
}

type Cells = Map<number, Map<string, Float64Array>>

/**
 * Per-key usage counts without a storage write per request, like LastUsedRecorder: the request
 * path finds the key's cell of the current minute (a Map lookup; a new cell once per key and
 * minute) and increments two numbers. Every `flushMs`, and on stop(), every pending cell is written
 * in one transaction (UsageRepository.addUsage, additive). A failed flush keeps its counts,
 * merged with what arrived meanwhile, for the next one. A kill -9 loses what was counted since the
 * last successful flush: at most one flush interval of counts.
 */
export class UsageRecorder extends BatchWriter {
  private pending: Cells = new Map()
  /** The batch being written: still pending for readers until it is stored. */
  private writing: Cells | undefined
  /** The current minute's map of `pending`, so that most requests need one Map lookup. */
  private minute = Number.NaN
  private minuteCells: Map<string, Float64Array> | undefined
  /** Cells in `pending` and `writing` together. */
  private cells = 0
  private readonly maxCells: number
  /** Requests not counted because the bound on cells was reached (see MAX_PENDING_CELLS). */
  dropped = 0

  constructor(
    private readonly usage: Pick<UsageRepository, 'addUsage'>,
    private readonly options: UsageRecorderOptions,
  ) {
    super(options.flushMs)
    this.maxCells = options.maxCells ?? MAX_PENDING_CELLS
  }

  /** The request path: counts one request of `keyId`, answered with `status`, at `now` (ms). */
  record(keyId: string, outcome: LimitOutcome, status: number, now: number): void {
    const minute = now - (now % MINUTE_MS)
    if (minute !== this.minute || this.minuteCells === undefined) {
      let cells = this.pending.get(minute)
      if (cells === undefined) {
        cells = new Map()
        this.pending.set(minute, cells)
      }
      this.minute = minute
      this.minuteCells = cells
    }
    let cell = this.minuteCells.get(keyId)
    if (cell === undefined) {
      if (this.cells >= this.maxCells) {
        this.dropped++
        this.options.onDropped?.()
        return
      }
      cell = new Float64Array(COUNTERS.length)
      this.minuteCells.set(keyId, cell)
      this.cells++
    }
    cell[decisionIndex(outcome)]!++
    const statusClass = statusClassIndex(status)
    if (statusClass >= 0) cell[statusClass]!++
  }

  /** Cells held now (pending and being written): what the memory bound applies to. */
  get size(): number {
    return this.cells
  }

  /**
   * What is counted here and not yet stored, for `keyIds`, in buckets of `size` ms within
   * [from, to): bucket start -> counts summed over the keys.
   */
  pendingBuckets(keyIds: readonly string[], size: number, from: number, to: number): Map<number, UsageCounts> {
    const out = new Map<number, UsageCounts>()
    for (const cells of [this.pending, this.writing]) {
      if (cells === undefined) continue
      for (const [minute, byKey] of cells) {
        const start = bucketStart(minute, size)
        if (start < from || start >= to) continue
        for (const id of keyIds) {
          const cell = byKey.get(id)
          if (cell === undefined) continue
          const bucket = out.get(start)
          if (bucket === undefined) out.set(start, countsOf(cell))
          else addCounts(bucket, countsOf(cell))
        }
      }
    }
    return out
  }

  /** What is counted here and not yet stored, per key, over the minutes in [from, to). */
  pendingTotals(from: number, to: number): Map<string, UsageCounts> {
    const out = new Map<string, UsageCounts>()
    for (const cells of [this.pending, this.writing]) {
      if (cells === undefined) continue
      for (const [minute, byKey] of cells) {
        if (minute < from || minute >= to) continue
        for (const [id, cell] of byKey) {
          const total = out.get(id)
          if (total === undefined) out.set(id, countsOf(cell))
          else addCounts(total, countsOf(cell))
        }
      }
    }
    return out
  }

  protected async write(): Promise<void> {
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    this.minuteCells = undefined
    this.writing = batch
    const rows: UsageCell[] = []
    for (const [minute, byKey] of batch) for (const [keyId, cell] of byKey) rows.push({ keyId, minute, counts: countsOf(cell) })
    try {
      await this.usage.addUsage(rows)
      this.cells -= rows.length
    } catch (error) {
      this.mergeBack(batch)
      this.options.onError?.(error)
    } finally {
      this.writing = undefined
    }
  }

  /** A batch that was not stored goes back into pending, added to what was counted meanwhile. */
  private mergeBack(batch: Cells): void {
    for (const [minute, byKey] of batch) {
      const cells = this.pending.get(minute)
      if (cells === undefined) {
        this.pending.set(minute, byKey)
        continue
      }
      for (const [keyId, cell] of byKey) {
        const current = cells.get(keyId)
        if (current === undefined) cells.set(keyId, cell)
        else {
          for (let i = 0; i < cell.length; i++) current[i]! += cell[i]!
          this.cells-- // two cells became one
        }
      }
    }
    this.minuteCells = undefined
  }
}
