import type { Clock } from '../../shared/clock.js'
import type { Quota } from '../../shared/plans.js'
import type { BanPolicy, LimitDecision, RateLimiter, UsageSnapshot } from '../limiter.js'
import { consumeOne, freshState, type IdentityState, isStale, peekState } from '../policy.js'
import type { LimiterStateFile } from './state-file.js'

export interface MemoryLimiterOptions {
  /** Keeps windows and bans across restarts: restored now, written when changed and on close(). */
  stateFile?: LimiterStateFile
  /** How often the state file is written when something changed (ms). */
  snapshotEveryMs?: number
  sweepEveryMs?: number
}

/**
 * Writing the state file serialises on the event loop: after a write that kept it busy for T ms,
 * the next waits at least this many times T, so that a huge state costs at most ~5% of the loop.
 */
const WRITE_SPACING_FACTOR = 20

/**
 * Limiter state in this process's memory. Exact under concurrency because Node runs each
 * consume() to completion on one thread: check and count happen with no await in between.
 */
export class MemoryLimiter implements RateLimiter {
  readonly kind = 'memory'
  private readonly states: Map<string, IdentityState>
  private readonly sweeper: NodeJS.Timeout
  private readonly stateFile: LimiterStateFile | undefined
  private readonly snapshotter: NodeJS.Timeout | undefined
  /** Something changed since the state file was last written: the only cost on the request path. */
  private dirty = false
  private writing: Promise<boolean> | undefined
  private nextWriteAt = 0

  constructor(
    private readonly clock: Clock,
    private readonly policy: BanPolicy,
    { stateFile, snapshotEveryMs = 2000, sweepEveryMs = 60_000 }: MemoryLimiterOptions = {},
  ) {
    this.stateFile = stateFile
    this.states = stateFile?.load(clock.now()) ?? new Map()
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs)
    this.sweeper.unref()
    if (stateFile !== undefined) {
      this.snapshotter = setInterval(() => this.writeIfDue(), snapshotEveryMs)
      this.snapshotter.unref()
    }
  }

  consumeSync(identity: string, quota: Quota): LimitDecision {
    let state = this.states.get(identity)
    if (state === undefined) {
      state = freshState()
      this.states.set(identity, state)
    }
    this.dirty = true
    return consumeOne(state, this.clock.now(), quota, this.policy)
  }

  consume(identity: string, quota: Quota): Promise<LimitDecision> {
    return Promise.resolve(this.consumeSync(identity, quota))
  }

  /** Reads only: marks nothing dirty, so a peeking process (the CLI) never writes the state file. */
  async peek(identity: string, quota: Quota): Promise<UsageSnapshot> {
    return peekState(this.states.get(identity), this.clock.now(), quota)
  }

  /** Forgets identities whose windows and bans are all over, so memory stays bounded by activity. */
  sweep(): number {
    const now = this.clock.now()
    let removed = 0
    for (const [identity, state] of this.states) {
      if (isStale(state, now)) {
        this.states.delete(identity)
        removed++
      }
    }
    return removed
  }

  get size(): number {
    return this.states.size
  }

  /** Writes the state file now if anything changed since the last write; resolves with whether it wrote. */
  writeState(): Promise<boolean> {
    // Writes run one after another, so that an older state never replaces a newer one.
    const write = (this.writing ?? Promise.resolve(false)).then(() => this.writeIfDirty())
    this.writing = write
    void write.finally(() => {
      if (this.writing === write) this.writing = undefined
    })
    return write
  }

  private writeIfDue(): void {
    if (this.dirty && this.writing === undefined && performance.now() >= this.nextWriteAt) void this.writeState()
  }

  private async writeIfDirty(): Promise<boolean> {
    if (this.stateFile === undefined || !this.dirty) return false
    // Cleared before the write: a request counted while it runs marks the state for the next one.
    this.dirty = false
    const result = await this.stateFile.write(this.states, this.clock.now())
    if (!result.ok) this.dirty = true
    this.nextWriteAt = performance.now() + WRITE_SPACING_FACTOR * result.blockingMs
    return result.ok
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper)
    clearInterval(this.snapshotter)
    await this.writeState()
  }
}
