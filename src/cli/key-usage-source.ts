import { statSync } from 'node:fs'
import type { Config } from '../config/config.js'
import { banPolicy } from '../limits/index.js'
import type { RateLimiter } from '../limits/limiter.js'
import { MemoryLimiter } from '../limits/memory/memory-limiter.js'
import { LimiterStateFile } from '../limits/memory/state-file.js'
import { systemClock } from '../shared/clock.js'

/** Where `keys usage` reads the counters from, and how fresh they are. */
export interface UsageSource {
  limiter: Pick<RateLimiter, 'peek' | 'close'>
  /** 'redis': live; 'state-file': as of the last snapshot a server wrote. */
  kind: 'redis' | 'state-file'
  /** When the state file was last written (ms), or null when there is none yet. */
  snapshotAt: number | null
}

const quiet = { warn() {}, info() {}, error() {} }

/**
 * The CLI cannot see a running server's memory. With REDIS_URL the counters are in Redis, live
 * (read-only, failing closed: an unreachable Redis is an error, never zeros). Without it, the
 * in-memory limiter's state file (LIMITER_STATE_FILE) is the best there is: the numbers as of the
 * last snapshot. Neither: undefined (the counters exist only inside the server processes).
 */
export async function openUsageSource(config: Config): Promise<UsageSource | undefined> {
  if (config.redisUrl !== undefined) {
    // Imported here: prom-client is start-up time every other CLI command would pay for nothing.
    const [{ RedisLimiter }, { Metrics }] = await Promise.all([import('../limits/redis/redis-limiter.js'), import('../ops/metrics.js')])
    const policy = banPolicy(config)
    const limiter = new RedisLimiter({
      url: config.redisUrl,
      policy,
      failurePolicy: 'closed',
      keyPrefix: config.redisKeyPrefix,
      maxAddresses: config.limiterMaxAddresses,
      fallback: new MemoryLimiter(systemClock, policy),
      metrics: new Metrics({ defaultMetrics: false }),
      log: quiet,
    })
    await limiter.firstConnection()
    return { limiter, kind: 'redis', snapshotAt: null }
  }
  if (config.limiterStateFile === undefined) return undefined
  let snapshotAt: number | null = null
  try {
    snapshotAt = statSync(config.limiterStateFile).mtimeMs
  } catch {
    // No snapshot yet: every count reads as 0.
  }
  // Peeking marks nothing dirty, so this limiter never writes the file (its close() writes only changes).
  const limiter = new MemoryLimiter(systemClock, banPolicy(config), { stateFile: new LimiterStateFile(config.limiterStateFile, quiet) })
  return { limiter, kind: 'state-file', snapshotAt }
}
