import { DEFAULT_MAX_ADDRESSES } from '../../config/config.js'
import type { Clock } from '../../shared/clock.js'
import type { Quota } from '../../shared/plans.js'
import { isAddressIdentity, isOverflowIdentity, overflowIdentity } from '../address-identities.js'
import type { BanPolicy, LimitDecision, RateLimiter, UsageSnapshot } from '../limiter.js'
import { consumeOne, foldState, freshState, type IdentityState, isStale, peekState } from '../policy.js'
import type { LimiterStateFile } from './state-file.js'

export interface MemoryLimiterOptions {
  /** Keeps windows and bans across restarts: restored now, written when changed and on close(). */
  stateFile?: LimiterStateFile
  /** How often the state file is written when something changed (ms). */
  snapshotEveryMs?: number
  sweepEveryMs?: number
  /** LIMITER_MAX_ADDRESSES: keyless addresses with counters of their own (see address-identities.ts). */
  maxAddresses?: number
}

/**
 * Writing the state file serialises on the event loop: after a write that kept it busy for T ms,
 * the next waits at least this many times T, so that a huge state costs at most ~5% of the loop.
 */
const WRITE_SPACING_FACTOR = 20

/**
 * Limiter state in this process's memory. Exact under concurrency because Node runs each
 * consume() to completion on one thread: check and count happen with no await in between.
 *
 * One map holds every counter: keys and admin tokens (exact, as many as there are), at most
 * `maxAddresses` keyless addresses, and the overflow counters (`o:<n>`, at most OVERFLOW_BUCKETS)
 * that every further address is counted in. An address that finds room after being counted in an
 * overflow counter (the sweep freed some) starts from a copy of that counter, which has counted
 * at least its requests: moving never hands a client requests back.
 */
export class MemoryLimiter implements RateLimiter {
  readonly kind = 'memory'
  private readonly states = new Map<string, IdentityState>()
  private readonly maxAddresses: number
  /** Addresses among `states`: at most maxAddresses. */
  private addresses = 0
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
    { stateFile, snapshotEveryMs = 2000, sweepEveryMs = 60_000, maxAddresses = DEFAULT_MAX_ADDRESSES }: MemoryLimiterOptions = {},
  ) {
    this.stateFile = stateFile
    this.maxAddresses = maxAddresses
    if (stateFile !== undefined) this.restore(stateFile.load(clock.now()))
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs)
    this.sweeper.unref()
    if (stateFile !== undefined) {
      this.snapshotter = setInterval(() => this.writeIfDue(), snapshotEveryMs)
      this.snapshotter.unref()
    }
  }

  consumeSync(identity: string, quota: Quota): LimitDecision {
    const state = this.states.get(identity) ?? this.stateOfNew(identity)
    this.dirty = true
    return consumeOne(state, this.clock.now(), quota, this.policy)
  }

  /** The counter of an identity without one: its own (a copy of its overflow counter for an address), or the overflow counter once the table is full. */
  private stateOfNew(identity: string): IdentityState {
    if (!isAddressIdentity(identity)) return this.add(identity, freshState())
    const overflow = overflowIdentity(identity)
    const shared = this.states.get(overflow)
    if (this.addresses >= this.maxAddresses) return shared ?? this.add(overflow, freshState())
    this.addresses++
    return this.add(identity, shared === undefined ? freshState() : { ...shared })
  }

  private add(identity: string, state: IdentityState): IdentityState {
    this.states.set(identity, state)
    return state
  }

  /**
   * Takes the state file's identities under this limiter's bound: addresses beyond it (a file
   * written under a larger LIMITER_MAX_ADDRESSES, or before there was one) are folded into their
   * overflow counters, so none of them gets requests back.
   */
  private restore(loaded: Map<string, IdentityState>): void {
    for (const [identity, state] of loaded) {
      if (isAddressIdentity(identity) && this.addresses >= this.maxAddresses) this.fold(overflowIdentity(identity), state)
      else if (isOverflowIdentity(identity)) this.fold(identity, state)
      else {
        if (isAddressIdentity(identity)) this.addresses++
        this.states.set(identity, state)
      }
    }
  }

  private fold(identity: string, state: IdentityState): void {
    const into = this.states.get(identity)
    if (into === undefined) this.states.set(identity, state)
    else foldState(into, state)
  }

  consume(identity: string, quota: Quota): Promise<LimitDecision> {
    return Promise.resolve(this.consumeSync(identity, quota))
  }

  /** Reads only: marks nothing dirty, so a peeking process (the CLI) never writes the state file. */
  async peek(identity: string, quota: Quota): Promise<UsageSnapshot> {
    // An address without a counter of its own would be counted in (or start from) its overflow counter.
    const state = this.states.get(identity) ?? (isAddressIdentity(identity) ? this.states.get(overflowIdentity(identity)) : undefined)
    return peekState(state, this.clock.now(), quota)
  }

  /** Forgets identities whose windows and bans are all over, so memory stays bounded by activity. */
  sweep(): number {
    const now = this.clock.now()
    let removed = 0
    for (const [identity, state] of this.states) {
      if (isStale(state, now)) {
        this.states.delete(identity)
        if (isAddressIdentity(identity)) this.addresses--
        removed++
      }
    }
    return removed
  }

  /** Counters held: identities with their own, and overflow counters. */
  get size(): number {
    return this.states.size
  }

  /** Keyless addresses with a counter of their own (at most maxAddresses). */
  get addressCount(): number {
    return this.addresses
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
