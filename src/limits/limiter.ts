import type { Quota } from '../shared/plans.js'

export interface WindowState {
  limit: number
  remaining: number
  /** Unix seconds at which this window resets. */
  resetAt: number
}

export interface LimitDecision {
  allowed: boolean
  /** The limiter's clock at the decision (ms), so header deltas use the clock that decided. */
  now: number
  /** Why a request was refused: an exhausted window, or a ban for hammering while limited. */
  reason?: 'rate_limited' | 'key_banned'
  minute: WindowState
  day: WindowState
  /**
   * Seconds until what refused the request lifts (0 when allowed): the exhausted windows' reset,
   * or the ban's end (a window may stay exhausted after it: see secondsUntilRetry in the HTTP layer).
   */
  retryAfter: number
  /** True when this very request started a ban (for metrics and logs). */
  banStarted?: boolean
}

/** When a client that keeps sending while limited is banned, and for how long. */
export interface BanPolicy {
  /** Rejections within one minute window that start a ban; 0 means the key's per-minute limit. */
  threshold: number
  baseSeconds: number
  maxSeconds: number
}

export interface WindowUsage {
  limit: number
  used: number
  remaining: number
  /** Unix seconds at which this window resets. */
  resetAt: number
}

/** One identity's counters as the next request would find them, without counting one. */
export interface UsageSnapshot {
  /** The limiter's clock (ms). */
  now: number
  minute: WindowUsage
  day: WindowUsage
  /** until: Unix seconds, or null when not banned; level: the escalation level (0 after it decays). */
  ban: { active: boolean; until: number | null; level: number }
}

/**
 * A rate limiter: checks and counts the minute and day windows of one identity (a key id or a
 * client address) in one atomic step. A request refused by either window consumes neither.
 */
export interface RateLimiter {
  readonly kind: string
  consume(identity: string, quota: Quota): Promise<LimitDecision>
  /**
   * The same decision without a promise when the limiter can take it without I/O (always for the
   * in-memory one; from a lease for the Redis one); undefined: ask consume().
   */
  consumeSync?(identity: string, quota: Quota): LimitDecision | undefined
  /** The identity's counters under `quota` right now, counting nothing: the numbers the headers of its last request showed. */
  peek(identity: string, quota: Quota): Promise<UsageSnapshot>
  /** Rejects when the limiter's backing store is unreachable (used by /readyz). */
  ping(): Promise<void>
  close(): Promise<void>
}
