import type { Clock } from '../../clock.js'
import type { Quota } from '../../keys/plans.js'
import type { BanPolicy, LimitDecision, RateLimiter } from '../limiter.js'
import { consumeOne, freshState, isStale, type IdentityState } from '../policy.js'

/**
 * Limiter state in this process's memory. Exact under concurrency because Node runs each
 * consume() to completion on one thread: check and count happen with no await in between.
 */
export class MemoryLimiter implements RateLimiter {
  readonly kind = 'memory'
  private readonly states = new Map<string, IdentityState>()
  private readonly sweeper: NodeJS.Timeout

  constructor(
    private readonly clock: Clock,
    private readonly policy: BanPolicy,
    sweepEveryMs = 60_000,
  ) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs)
    this.sweeper.unref()
  }

  consumeSync(identity: string, quota: Quota): LimitDecision {
    let state = this.states.get(identity)
    if (state === undefined) {
      state = freshState()
      this.states.set(identity, state)
    }
    return consumeOne(state, this.clock.now(), quota, this.policy)
  }

  consume(identity: string, quota: Quota): Promise<LimitDecision> {
    return Promise.resolve(this.consumeSync(identity, quota))
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

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper)
  }
}
