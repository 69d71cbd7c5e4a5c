import { readFileSync } from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
import type { Cluster, Redis } from 'ioredis'
import type { RedisFailurePolicy } from '../../config/config.js'
import { DEFAULT_MAX_ADDRESSES } from '../../config/config.js'
import type { Metrics } from '../../ops/metrics.js'
import type { Quota } from '../../shared/plans.js'
import { redactUrl } from '../../shared/startup-error.js'
import type { BanPolicy, LimitDecision } from '../limiter.js'
import { banThreshold, type IdentityState } from '../policy.js'
import { connectRedis, REDIS_TIMEOUTS } from './connection.js'
import { ADDRESS_TABLES, limiterKeys } from './limiter-keys.js'

// Read once at load; scripts/copy-assets.mjs puts the files next to the compiled module.
const CONSUME_LUA = readFileSync(new URL('./consume.lua', import.meta.url), 'utf8')
const PEEK_LUA = readFileSync(new URL('./peek.lua', import.meta.url), 'utf8')

const REASONS = [undefined, 'rate_limited', 'key_banned'] as const

export interface RedisQuotaStoreOptions {
  /** REDIS_URL: redis://, rediss://, redis+cluster://… or redis+sentinel://…/master (src/config/config.ts). */
  url: string
  policy: BanPolicy
  /** What an outage means for requests, for its log lines (the limiter applies it). */
  failurePolicy: RedisFailurePolicy
  metrics: Pick<Metrics, 'dependencyUp' | 'limiterCalls'>
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
   * How long requests wait for the very first connection before deciding without Redis (default
   * 1.5 s: a server that accepts the socket but never answers the handshake).
   */
  firstAttemptMs?: number
}

/** What the script answered to a call that asked for `want` admissions. */
export interface Reservation {
  /** The first admission's decision (or the refusal), exactly as a one-number call would get it. */
  decision: LimitDecision
  /** Admission numbers reserved: 0 when refused, else 1..want. */
  granted: number
  /** When refused by a ban: its end (ms, Redis' clock); else 0. */
  banUntil: number
}

/** An identity's counters as Redis holds them, and Redis' clock when the script read them (ms). */
export interface StoredState {
  now: number
  state: IdentityState
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
 * The limiter's counters in Redis: the connection, the two scripts (consume.lua counts and
 * reserves, peek.lua reads) and whether Redis answers (up or down, each change logged once, the
 * `dependencyUp` gauge). It decides nothing: a call Redis cannot answer now is `undefined`, and
 * its caller (RedisLimiter, through QuotaLeases for a key's runs) applies the failure policy.
 * Calls go one way: the limiter and the leases call it, it calls neither.
 */
export class RedisQuotaStore {
  private readonly redis: ScriptedRedis
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

  constructor(private readonly options: RedisQuotaStoreOptions) {
    this.keyPrefix = options.keyPrefix ?? 'as:rl:'
    this.addressesPerTable = Math.ceil((options.maxAddresses ?? DEFAULT_MAX_ADDRESSES) / ADDRESS_TABLES)
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

  /** Whether the first connection attempt is still being made (callers wait for it: `firstAttempted`). */
  get starting(): boolean {
    return this.up === undefined && !this.closing
  }

  /** Settles when the first connection attempt does (at most firstAttemptMs), either way. */
  firstAttempted(): Promise<void> {
    return this.firstAttempt
  }

  /** Up to `want` admissions reserved in Redis (or its refusal), or undefined when Redis cannot answer now. */
  async reserve(identity: string, quota: Quota, want: number): Promise<Reservation | undefined> {
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

  /** An identity's counters, counting nothing, on Redis' clock; undefined when Redis cannot answer now. */
  async peek(identity: string): Promise<StoredState | undefined> {
    if (this.redis.status !== 'ready') return undefined
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
      return { now, state: { minuteStart, minuteCount, minuteRejected, dayStart, dayCount, banUntil, banLevel, banLevelExpiresAt } }
    } catch (error) {
      this.markDown(error)
      return undefined
    }
  }

  /** A request decided without Redis during this outage: the recovery's log line says how many. */
  decidedWithoutRedis(): void {
    this.outageDecisions++
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
    try {
      if (this.redis.status === 'ready') await this.redis.quit()
      else this.redis.disconnect()
    } catch {
      this.redis.disconnect()
    }
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
    const { failurePolicy } = this.options
    const effect =
      failurePolicy === 'open'
        ? 'rate limits are per instance until it returns (REDIS_FAILURE_POLICY=open)'
        : 'answering 503 until it returns (REDIS_FAILURE_POLICY=closed)'
    const url = redactUrl(this.options.url)
    const err = cause instanceof Error ? cause.message : String(cause)
    const level = !this.everConnected || failurePolicy === 'closed' ? 'error' : 'warn'
    this.options.log[level]({ err, failurePolicy, redis: url }, `rate limiter: Redis unreachable at ${url} (${err}); ${effect}`)
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
        `rate limiter: Redis at ${url} answers again; ${this.options.failurePolicy === 'open' ? 'limits are shared again' : 'serving requests again'}`,
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
