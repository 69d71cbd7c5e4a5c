import { readFileSync } from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
import type { Cluster, Redis } from 'ioredis'
import type { RedisFailurePolicy } from '../../config/config.js'
import { DEFAULT_MAX_ADDRESSES } from '../../config/config.js'
import type { Metrics } from '../../ops/metrics.js'
import { LimiterUnavailableError } from '../../shared/outages.js'
import type { Quota } from '../../shared/plans.js'
import { redactUrl } from '../../shared/startup-error.js'
import { isAddressIdentity } from '../address-identities.js'
import type { BanPolicy, LimitDecision, RateLimiter, UsageSnapshot } from '../limiter.js'
import type { MemoryLimiter } from '../memory/memory-limiter.js'
import { banThreshold, type IdentityState, peekState } from '../policy.js'
import { connectRedis, REDIS_TIMEOUTS } from './connection.js'
import { DEFAULT_LEASE_MAX, QuotaLeases, type Reservation } from './leases.js'
import { ADDRESS_TABLES, limiterKeys } from './limiter-keys.js'

// Read once at load; scripts/copy-assets.mjs puts the file next to the compiled module.
const CONSUME_LUA = readFileSync(new URL('./consume.lua', import.meta.url), 'utf8')
const PEEK_LUA = readFileSync(new URL('./peek.lua', import.meta.url), 'utf8')

const REASONS = [undefined, 'rate_limited', 'key_banned'] as const

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

type ConsumeReply = [number, number, number, number, number, number, number, number, number, number, number]
type PeekReply = [number, number, number, number, number, number, number, number, number]
/** One server or a Sentinel-watched master (Redis), or a Redis Cluster. */
type ScriptedRedis = (Redis | Cluster) & {
  /** numberOfKeys, the keys of limiterKeys(), then the arguments (consume.lua). */
  asRateLimitConsume(numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<ConsumeReply>
  asRateLimitPeek(numberOfKeys: number, ...keys: string[]): Promise<PeekReply>
}

/**
 * Limiter state in Redis, shared by every instance: a Lua script checks and counts both windows
 * atomically on Redis' clock, so the limits are exact across instances. A key's requests are
 * admitted from runs of admission numbers that one script call reserves (leases.ts), so a busy key
 * costs one call per run, not one per request; a keyless address makes one call per request.
 */
export class RedisLimiter implements RateLimiter {
  readonly kind = 'redis'
  private readonly redis: ScriptedRedis
  private readonly failurePolicy: RedisFailurePolicy
  private readonly keyPrefix: string
  /** Admissions a day per address table. */
  private readonly addressesPerTable: number
  /** undefined until the first connection or failure; then whether Redis last answered. */
  private up: boolean | undefined
  private everConnected = false
  private outageStartedAt = 0
  private outageDecisions = 0
  private closing = false
  private probing = false
  /** The restart of a client that ioredis ended by itself (see the constructor). */
  private restart: NodeJS.Timeout | undefined
  /** Settles when the first connection attempt does, either way. */
  private readonly firstAttempt: Promise<void>
  /** undefined when LIMITER_LEASE_MAX is 1. */
  private readonly leases: QuotaLeases | undefined

  constructor(private readonly options: RedisLimiterOptions) {
    this.failurePolicy = options.failurePolicy ?? 'open'
    this.keyPrefix = options.keyPrefix ?? 'as:rl:'
    this.addressesPerTable = Math.ceil((options.maxAddresses ?? DEFAULT_MAX_ADDRESSES) / ADDRESS_TABLES)
    const leaseMax = options.leaseMax ?? DEFAULT_LEASE_MAX
    this.leases =
      leaseMax > 1
        ? new QuotaLeases(
            {
              reserve: (identity, quota, want) => this.reserveInRedis(identity, quota, want),
              withoutRedis: (identity, quota) => this.decideWithoutRedis(identity, quota),
            },
            leaseMax,
          )
        : undefined
    const reconnectMaxMs = options.reconnectMaxMs ?? 1000
    this.redis = connectRedis(options.url, {
      commandTimeoutMs: options.commandTimeoutMs ?? REDIS_TIMEOUTS.commandMs,
      connectTimeoutMs: options.connectTimeoutMs ?? REDIS_TIMEOUTS.connectMs,
      socketTimeoutMs: options.socketTimeoutMs ?? REDIS_TIMEOUTS.socketMs,
      reconnectMaxMs,
    }) as ScriptedRedis
    // Without numberOfKeys: each call says how many keys it passes (one, or three for an address).
    this.redis.defineCommand('asRateLimitConsume', { lua: CONSUME_LUA })
    this.redis.defineCommand('asRateLimitPeek', { lua: PEEK_LUA })
    // Requests that arrive while the very first connection is being made wait for it (bounded by
    // connectTimeout) rather than fall back: a starting instance is not an outage.
    this.firstAttempt = new Promise((resolve) => {
      this.redis.once('ready', resolve)
      this.redis.once('error', resolve)
      this.redis.once('close', resolve)
      // A server that accepts the socket but never answers the handshake raises neither.
      setTimeout(resolve, options.firstAttemptMs ?? 1500).unref()
    })
    this.redis.on('ready', () => this.markUp())
    // Connection errors arrive here on every failed attempt; without a listener ioredis prints them.
    this.redis.on('error', (error: Error) => this.markDown(error))
    this.redis.on('close', () => {
      if (!this.closing) this.markDown(new Error('connection closed'))
    })
    // ioredis stops reconnecting for good (status "end") when a connection attempt itself fails,
    // and its Sentinel failover detector can abort one: a +switch-master that arrives while the
    // client asks a Sentinel for the master ends the client (test/limits/redis/sentinel-reconnect.test.ts).
    // The limiter must heal without a restart, so a client that ended without close() starts over.
    this.redis.on('end', () => {
      if (this.closing || this.restart !== undefined) return
      this.options.log.warn({ redis: redactUrl(options.url) }, 'rate limiter: the Redis client stopped reconnecting; starting it again')
      this.restart = setTimeout(() => {
        this.restart = undefined
        if (!this.closing && this.redis.status === 'end') this.redis.connect().catch(() => {})
      }, reconnectMaxMs)
      this.restart.unref()
    })
  }

  /** An admission from this instance's lease of the key's windows, or undefined: ask consume(). */
  consumeSync(identity: string, quota: Quota): LimitDecision | undefined {
    return this.leases?.take(identity, quota)
  }

  async consume(identity: string, quota: Quota): Promise<LimitDecision> {
    const leased = this.leases?.take(identity, quota)
    if (leased !== undefined) return leased
    if (this.up === undefined && !this.closing) await this.firstAttempt
    // An address (a keyless client, limiterKeys() gives it three keys) is decided call by call.
    if (this.leases !== undefined && !isAddressIdentity(identity)) return this.leases.consume(identity, quota)
    const sentAt = this.leases?.now()
    const reserved = await this.reserveInRedis(identity, quota, 1)
    if (reserved === undefined) return this.decideWithoutRedis(identity, quota)
    if (sentAt !== undefined) this.leases?.noteBan(identity, quota, reserved, sentAt)
    return reserved.decision
  }

  /** While Redis cannot answer: the fallback limiter (open), or LimiterUnavailableError (closed). */
  private async decideWithoutRedis(identity: string, quota: Quota): Promise<LimitDecision> {
    this.outageDecisions++
    this.options.metrics.limiterFallback.inc({ policy: this.failurePolicy })
    if (this.failurePolicy === 'closed') throw new LimiterUnavailableError()
    return this.options.fallback.consume(identity, quota)
  }

  /**
   * Read-only, on Redis' clock like consume. While Redis is unreachable: the fallback's counts
   * (what decides requests then) under REDIS_FAILURE_POLICY=open; LimiterUnavailableError under closed.
   */
  async peek(identity: string, quota: Quota): Promise<UsageSnapshot> {
    if (this.up === undefined && !this.closing) await this.firstAttempt
    if (this.redis.status === 'ready') {
      try {
        const keys = limiterKeys(this.keyPrefix, identity)
        // An address: its own hash, else its overflow counter.
        const read = keys.length === 1 ? keys : [keys[0], keys[2]]
        const [now, ...f] = await this.redis.asRateLimitPeek(read.length, ...read)
        const [minuteStart, minuteCount, minuteRejected, dayStart, dayCount, banUntil, banLevel, banLevelExpiresAt] = f as [
          number,
          number,
          number,
          number,
          number,
          number,
          number,
          number,
        ]
        const state: IdentityState = { minuteStart, minuteCount, minuteRejected, dayStart, dayCount, banUntil, banLevel, banLevelExpiresAt }
        const snapshot = peekState(state, now, quota)
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
      } catch (error) {
        this.markDown(error)
      }
    }
    if (this.failurePolicy === 'closed') throw new LimiterUnavailableError()
    return this.options.fallback.peek(identity, quota)
  }

  /** Up to `want` admissions reserved in Redis (or its refusal), or undefined when Redis cannot answer now. */
  private async reserveInRedis(identity: string, quota: Quota, want: number): Promise<Reservation | undefined> {
    // Not connected: ioredis would reject at once anyway (no offline queue); skip the round trip.
    if (this.redis.status !== 'ready') {
      this.markDown(new Error(`redis connection ${this.redis.status}`))
      return undefined
    }
    // After a failure on a live connection (a hung or overloaded server), one request at a time
    // probes Redis; the others decide at once instead of each waiting out the command timeout.
    const probe = this.up === false
    if (probe) {
      if (this.probing) return undefined
      this.probing = true
    }
    try {
      const keys = limiterKeys(this.keyPrefix, identity)
      this.options.metrics.limiterCalls.inc()
      const reply = await this.redis.asRateLimitConsume(
        keys.length,
        ...keys,
        quota.perMinute,
        quota.perDay,
        banThreshold(this.options.policy, quota),
        this.options.policy.baseSeconds,
        this.options.policy.maxSeconds,
        want,
        this.addressesPerTable,
      )
      this.markUp()
      return { decision: toDecision(reply, quota), granted: reply[9], banUntil: reply[10] }
    } catch (error) {
      this.markDown(error)
      return undefined
    } finally {
      if (probe) this.probing = false
    }
  }

  /**
   * Resolves once the first connection attempt has settled (at most firstAttemptMs): true when Redis
   * answered. Otherwise the outage has been logged, loudly, and the limiter runs on its failure policy.
   */
  async firstConnection(): Promise<boolean> {
    await this.firstAttempt
    if (this.up !== true) this.markDown(new Error(`no answer within ${(this.options.firstAttemptMs ?? 1500) / 1000} s`))
    return this.up === true
  }

  async ping(): Promise<void> {
    await this.redis.ping()
  }

  async close(): Promise<void> {
    this.closing = true
    clearTimeout(this.restart)
    this.leases?.clear()
    try {
      if (this.redis.status === 'ready') await this.redis.quit()
      else this.redis.disconnect()
    } catch {
      this.redis.disconnect()
    }
    await this.options.fallback.close()
  }

  /**
   * Logs once per outage; the cause is an error message, never a key or an identity. An outage
   * at start (Redis never answered: often a wrong REDIS_URL) and any outage that makes requests
   * fail (closed) are errors; a later outage that the local fallback absorbs (open) is a warning.
   */
  private markDown(cause: unknown): void {
    if (this.up === false || this.closing) return
    this.up = false
    this.outageStartedAt = Date.now()
    this.outageDecisions = 0
    this.options.metrics.dependencyUp.set({ dependency: 'redis' }, 0)
    const effect =
      this.failurePolicy === 'open'
        ? 'rate limits are per instance until it returns (REDIS_FAILURE_POLICY=open)'
        : 'answering 503 until it returns (REDIS_FAILURE_POLICY=closed)'
    const url = redactUrl(this.options.url)
    const err = cause instanceof Error ? cause.message : String(cause)
    const level = !this.everConnected || this.failurePolicy === 'closed' ? 'error' : 'warn'
    this.options.log[level](
      { err, failurePolicy: this.failurePolicy, redis: url },
      `rate limiter: Redis unreachable at ${url} (${err}); ${effect}`,
    )
  }

  private markUp(): void {
    this.everConnected = true
    if (this.up === true) return
    const wasDown = this.up === false
    this.up = true
    this.options.metrics.dependencyUp.set({ dependency: 'redis' }, 1)
    if (wasDown) {
      const url = redactUrl(this.options.url)
      this.options.log.info(
        { outageMs: Date.now() - this.outageStartedAt, decisionsWithoutRedis: this.outageDecisions, redis: url },
        `rate limiter: Redis at ${url} answers again; ${this.failurePolicy === 'open' ? 'limits are shared again' : 'serving requests again'}`,
      )
    }
  }
}

function toDecision(reply: ConsumeReply, quota: Quota): LimitDecision {
  const [allowed, reason, now, minuteRemaining, dayRemaining, minuteResetAt, dayResetAt, retryAfter, banStarted] = reply
  const decision: LimitDecision = {
    allowed: allowed === 1,
    now,
    minute: { limit: quota.perMinute, remaining: minuteRemaining, resetAt: minuteResetAt },
    day: { limit: quota.perDay, remaining: dayRemaining, resetAt: dayResetAt },
    retryAfter,
  }
  const why = REASONS[reason]
  if (why !== undefined) decision.reason = why
  if (banStarted === 1) decision.banStarted = true
  return decision
}
