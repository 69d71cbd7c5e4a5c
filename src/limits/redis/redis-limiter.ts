import type { FastifyBaseLogger } from 'fastify'
import type { RedisFailurePolicy } from '../../config/config.js'
import type { Metrics } from '../../ops/metrics.js'
import { LimiterUnavailableError } from '../../shared/outages.js'
import type { Quota } from '../../shared/plans.js'
import { isAddressIdentity } from '../address-identities.js'
import type { BanPolicy, LimitDecision, RateLimiter, UsageSnapshot } from '../limiter.js'
import type { MemoryLimiter } from '../memory/memory-limiter.js'
import { peekState } from '../policy.js'
import { DEFAULT_LEASE_MAX, QuotaLeases } from './leases.js'
import { RedisQuotaStore } from './quota-store.js'

export interface RedisLimiterOptions {
  /** REDIS_URL: redis://, rediss://, redis+cluster://… or redis+sentinel://…/master (src/config/config.ts). */
  url: string
  policy: BanPolicy
  /** 'open': decide with `fallback` while Redis is unreachable; 'closed': throw (503). */
  failurePolicy?: RedisFailurePolicy
  fallback: MemoryLimiter
  metrics: Pick<Metrics, 'limiterFallback' | 'dependencyUp' | 'limiterCalls'>
  log: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>
  /** Prefix of the per-identity hash keys (tests use their own to stay apart). */
  keyPrefix?: string
  /** LIMITER_MAX_ADDRESSES: keyless addresses admitted a day with counters of their own (see ADDRESS_TABLES). */
  maxAddresses?: number
  /** Longest wait between reconnection attempts: bounds the recovery time once Redis is back. */
  reconnectMaxMs?: number
  /** These three default to REDIS_TIMEOUTS (connection.ts); tests on a loaded machine widen them. */
  commandTimeoutMs?: number
  connectTimeoutMs?: number
  socketTimeoutMs?: number
  /**
   * LIMITER_LEASE_MAX: the most admissions of one key's windows one call reserves for this instance
   * (leases.ts); 1 makes one call per request.
   */
  leaseMax?: number
  /**
   * How long requests wait for the very first connection before deciding with the fallback
   * (default 1.5 s: a server that accepts the socket but never answers the handshake).
   */
  firstAttemptMs?: number
}

/**
 * Limiter state in Redis, shared by every instance: a Lua script checks and counts both windows
 * atomically on Redis' clock, so the limits are exact across instances. A key's requests are
 * admitted from runs of admission numbers that one script call reserves (leases.ts), so a busy key
 * costs one call per run, not one per request; a keyless address makes one call per request.
 *
 * Calls go one way: the limiter asks the leases (a key's runs and the bans Redis answered), and
 * both ask the store (quota-store.ts: the connection and the scripts), which answers `undefined`
 * when Redis cannot answer now. What happens then is decided here, and only here: the failure
 * policy (the fallback limiter, or LimiterUnavailableError).
 */
export class RedisLimiter implements RateLimiter {
  readonly kind = 'redis'
  private readonly failurePolicy: RedisFailurePolicy
  private readonly store: RedisQuotaStore
  /** undefined when LIMITER_LEASE_MAX is 1. */
  private readonly leases: QuotaLeases | undefined

  constructor(private readonly options: RedisLimiterOptions) {
    this.failurePolicy = options.failurePolicy ?? 'open'
    this.store = new RedisQuotaStore({ ...options, failurePolicy: this.failurePolicy })
    const leaseMax = options.leaseMax ?? DEFAULT_LEASE_MAX
    this.leases = leaseMax > 1 ? new QuotaLeases(this.store, leaseMax) : undefined
  }

  /** An admission from this instance's lease of the key's windows, or undefined: ask consume(). */
  consumeSync(identity: string, quota: Quota): LimitDecision | undefined {
    return this.leases?.take(identity, quota)
  }

  async consume(identity: string, quota: Quota): Promise<LimitDecision> {
    const leased = this.leases?.take(identity, quota)
    if (leased !== undefined) return leased
    if (this.store.starting) await this.store.firstAttempted()
    const decided =
      this.leases === undefined
        ? (await this.store.reserve(identity, quota, 1))?.decision
        : // An address (a keyless client, limiterKeys() gives it three keys) is decided call by call.
          isAddressIdentity(identity)
          ? await this.leases.single(identity, quota)
          : await this.leases.consume(identity, quota)
    return decided ?? this.decideWithoutRedis(identity, quota)
  }

  /** While Redis cannot answer: the fallback limiter (open), or LimiterUnavailableError (closed). */
  private async decideWithoutRedis(identity: string, quota: Quota): Promise<LimitDecision> {
    this.store.decidedWithoutRedis()
    this.options.metrics.limiterFallback.inc({ policy: this.failurePolicy })
    if (this.failurePolicy === 'closed') throw new LimiterUnavailableError()
    return this.options.fallback.consume(identity, quota)
  }

  /**
   * Read-only, on Redis' clock like consume. While Redis is unreachable: the fallback's counts
   * (what decides requests then) under REDIS_FAILURE_POLICY=open; LimiterUnavailableError under closed.
   */
  async peek(identity: string, quota: Quota): Promise<UsageSnapshot> {
    if (this.store.starting) await this.store.firstAttempted()
    const stored = await this.store.peek(identity)
    if (stored !== undefined) {
      const snapshot = peekState(stored.state, stored.now, quota)
      // Numbers this instance reserved and has not used yet are still to be admitted here: the
      // snapshot then agrees with the Remaining of this instance's last answer (leases.ts).
      const unused = this.leases?.unused(identity, snapshot) ?? 0
      if (unused > 0) {
        for (const window of [snapshot.minute, snapshot.day]) {
          window.used = Math.max(0, window.used - unused)
          window.remaining = Math.min(window.limit, window.remaining + unused)
        }
      }
      return snapshot
    }
    if (this.failurePolicy === 'closed') throw new LimiterUnavailableError()
    return this.options.fallback.peek(identity, quota)
  }

  /**
   * Resolves once the first connection attempt has settled (at most firstAttemptMs): true when Redis
   * answered. Otherwise the outage has been logged, loudly, and the limiter runs on its failure policy.
   */
  firstConnection(): Promise<boolean> {
    return this.store.firstConnection()
  }

  ping(): Promise<void> {
    return this.store.ping()
  }

  async close(): Promise<void> {
    this.leases?.clear()
    await this.store.close()
    await this.options.fallback.close()
  }
}
