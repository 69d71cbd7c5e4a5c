import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config/config.js'
import type { Metrics } from '../ops/metrics.js'
import type { Clock } from '../shared/clock.js'
import type { BanPolicy, RateLimiter } from './limiter.js'
import { MemoryLimiter } from './memory/memory-limiter.js'
import { LimiterStateFile } from './memory/state-file.js'

export function banPolicy(config: Pick<Config, 'banThreshold' | 'banBaseSeconds' | 'banMaxSeconds'>): BanPolicy {
  return { threshold: config.banThreshold, baseSeconds: config.banBaseSeconds, maxSeconds: config.banMaxSeconds }
}

/**
 * In-memory limiter by default, kept across restarts in LIMITER_STATE_FILE when there is one;
 * Redis (shared by all instances) when REDIS_URL is set. Redis' fallback for outages is never
 * persisted: its counts cover only the outage, and Redis has the real ones. Redis is tried once
 * before the server starts, so an unreachable one is an error line at start, not a surprise at the
 * first request; it does not stop the start (the failure policy applies).
 */
export async function createLimiter(config: Config, clock: Clock, metrics: Metrics, log: FastifyBaseLogger): Promise<RateLimiter> {
  const policy = banPolicy(config)
  if (config.redisUrl === undefined) {
    return new MemoryLimiter(clock, policy, {
      stateFile: config.limiterStateFile === undefined ? undefined : new LimiterStateFile(config.limiterStateFile, log),
      snapshotEveryMs: config.limiterSnapshotMs,
      maxAddresses: config.limiterMaxAddresses,
    })
  }
  const { RedisLimiter } = await import('./redis/redis-limiter.js')
  const limiter = new RedisLimiter({
    url: config.redisUrl,
    policy,
    failurePolicy: config.redisFailurePolicy,
    fallback: new MemoryLimiter(clock, policy, { maxAddresses: config.limiterMaxAddresses }),
    maxAddresses: config.limiterMaxAddresses,
    leaseMax: config.limiterLeaseMax,
    keyPrefix: config.redisKeyPrefix,
    metrics,
    log,
  })
  await limiter.firstConnection()
  return limiter
}
