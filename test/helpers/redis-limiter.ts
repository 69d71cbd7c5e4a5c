/**
 * A RedisLimiter with a recording log, its own metrics and a memory fallback, for the limiter
 * contract (test/limits/) and the Redis outage tests (test/system/limits/redis-limiter-outage.test.ts).
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { BanPolicy } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { RedisLimiter, type RedisLimiterOptions } from '../../src/limits/redis/redis-limiter.js'
import { Metrics } from '../../src/ops/metrics.js'
import { systemClock } from '../../src/shared/clock.js'
import type { Quota } from '../../src/shared/plans.js'
import { REDIS_URL } from './services.js'

/** One run's keys live under their own prefix: parallel runs never collide, and cleanup is exact. */
export const RUN_PREFIX = `as:test:${randomUUID()}:`
export const DEFAULT_POLICY: BanPolicy = { threshold: 0, baseSeconds: 60, maxSeconds: 3600 }
export const FREE: Quota = { perMinute: 60, perDay: 1000 }

let seq = 0
export const uniqueIdentity = () => `k:${process.pid}-${++seq}-${randomUUID().slice(0, 8)}`

export class RecordingLog {
  readonly errors: unknown[][] = []
  readonly warns: unknown[][] = []
  readonly infos: unknown[][] = []
  error = (...args: unknown[]) => void this.errors.push(args)
  warn = (...args: unknown[]) => void this.warns.push(args)
  info = (...args: unknown[]) => void this.infos.push(args)
}

export interface RedisHarness {
  limiter: RedisLimiter
  fallback: MemoryLimiter
  metrics: Metrics
  log: RecordingLog
}

/**
 * A RedisLimiter on REDIS_URL (or `options.url`) under RUN_PREFIX, with bounds for a loaded machine
 * (test files run concurrently), unless given: the limiter decides with its fallback when a bound
 * expires, which is not what a test of Redis' decisions compares. The timeout and outage tests set
 * their own.
 * - The command timeout is 10 s (the service's is 500 ms).
 * - So is the wait for the first connection: CI once saw three new limiters not connected within
 *   the service's 1.5 s, each deciding alone with its fallback (180 of 200 allowed where Redis
 *   allows 60).
 * - So are the connect timeout (1 s in the service) and the socket timeout (20 s; 2 s in the
 *   service). Both are timers that a stalled event loop runs before it reads the answer that has
 *   arrived meanwhile: a 2 s stall dropped a connection in CI, and the fallback's admissions came on
 *   top of Redis' (the address table's property saw an address pass more than its plan).
 */
export function redisLimiter(options: Partial<RedisLimiterOptions> & { policy?: BanPolicy } = {}): RedisHarness {
  const policy = options.policy ?? DEFAULT_POLICY
  const fallback = new MemoryLimiter(systemClock, policy)
  const metrics = new Metrics({ defaultMetrics: false })
  const log = new RecordingLog()
  const limiter = new RedisLimiter({
    url: REDIS_URL,
    keyPrefix: RUN_PREFIX,
    fallback,
    metrics,
    log,
    commandTimeoutMs: 10_000,
    firstAttemptMs: 10_000,
    connectTimeoutMs: 10_000,
    socketTimeoutMs: 20_000,
    ...options,
    policy,
  })
  return { limiter, fallback, metrics, log }
}

/** Decisions taken by the fallback under `policy` (animal_store_limiter_fallback_total). */
export async function fallbackCount(metrics: Metrics, policy: 'open' | 'closed'): Promise<number> {
  const { values } = await metrics.limiterFallback.get()
  return values.find((v) => v.labels.policy === policy)?.value ?? 0
}

/**
 * Fails, naming the cause, if the limiter has logged an outage (or anything else): its decisions
 * since then may be its fallback's, and a test that compares Redis' decisions must say so rather
 * than report a wrong count.
 */
export function assertDecidedByRedis(h: Pick<RedisHarness, 'log'>, context = ''): void {
  const logged = [...h.log.errors, ...h.log.warns].map((args) => String(args.at(-1)))
  assert.deepEqual(logged, [], `the limiter logged an outage${context ? ` (${context})` : ''}: its decisions are not all Redis'`)
}

/** animal_store_dependency_up{dependency="redis"}. */
export async function redisUpGauge(metrics: Metrics): Promise<number | undefined> {
  const { values } = await metrics.dependencyUp.get()
  return values.find((v) => v.labels.dependency === 'redis')?.value
}

/** Runs `fn` and returns its value with the milliseconds it took. */
export async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now()
  const value = await fn()
  return [value, performance.now() - start]
}
