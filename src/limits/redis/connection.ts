import { Cluster, Redis, type RedisOptions } from 'ioredis'
import { redisTarget } from '../../config/config.js'
import type { RedisTarget } from '../../config/redis-url.js'

export interface RedisConnectionOptions {
  commandTimeoutMs: number
  /** How long a connection may take to open. */
  connectTimeoutMs: number
  /** How long a connection with commands in flight may stay silent before it is dropped and redialled. */
  socketTimeoutMs: number
  /** Longest wait between reconnection attempts. */
  reconnectMaxMs: number
}

/**
 * The service's bounds on Redis (a request must never wait long on the limiter): a command's
 * answer, opening a connection, and the silence of a connection with commands in flight (a hung
 * server), after which ioredis drops it and redials.
 */
export const REDIS_TIMEOUTS = { commandMs: 500, connectMs: 1000, socketMs: 2000 } as const

/** Reconnects forever with capped, jittered backoff, so the limiter heals without a restart. */
const retryStrategy = (reconnectMaxMs: number) => (times: number) =>
  Math.min(50 * 2 ** Math.min(times, 10), reconnectMaxMs) + Math.floor(Math.random() * 50)

/**
 * The client for what REDIS_URL names (src/config/config.ts, redisTarget): one server, a Redis Cluster
 * or a Sentinel-watched master, all with the same fail-fast settings. The limiter's script touches
 * one key per identity (`as:rl:{identity}`, hash-tagged), so it runs unchanged on a cluster.
 */
export function connectRedis(url: string, options: RedisConnectionOptions): Redis | Cluster {
  const target: RedisTarget = redisTarget(url)
  const common: RedisOptions = {
    // A request must never wait long on the limiter: fail fast, then fall back or refuse.
    connectTimeout: options.connectTimeoutMs,
    commandTimeout: options.commandTimeoutMs,
    // A hung server (socket open, no replies) gets its connection dropped and redialled.
    socketTimeout: options.socketTimeoutMs,
    // Never replay a consume after a reconnect: the request was already decided (by the fallback
    // or with a 503), and a replay could count it a second time.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // RESP2 works with every Redis version; RESP3 brings nothing to an integer-array reply.
    protocol: 2,
  }
  if (target.mode === 'single') {
    return new Redis(target.url, {
      ...common,
      enableOfflineQueue: false,
      retryStrategy: retryStrategy(options.reconnectMaxMs),
      // The consumes of the requests handled in one event-loop turn go out in one write (and their
      // replies come back in one read) instead of a syscall each way per request. Only here: the
      // Cluster and Sentinel failover tests were made without it.
      enableAutoPipelining: true,
    })
  }
  const auth = { username: target.username, password: target.password, ...(target.tls ? { tls: {} } : {}) }
  if (target.mode === 'sentinel') {
    return new Redis({
      ...common,
      ...auth,
      sentinels: target.sentinels,
      name: target.masterName,
      role: 'master',
      enableOfflineQueue: false,
      // Asked of the Sentinels on every (re)connection: after a failover the next reconnection
      // finds the promoted replica; a master demoted under us is left at once (READONLY).
      retryStrategy: retryStrategy(options.reconnectMaxMs),
      sentinelRetryStrategy: retryStrategy(options.reconnectMaxMs),
      sentinelMaxConnections: 3,
      reconnectOnError: (error) => error.message.startsWith('READONLY'),
      failoverDetector: true,
      ...(target.tls ? { enableTLSForSentinelMode: true } : {}),
    })
  }
  return new Cluster(target.nodes, {
    redisOptions: { ...common, ...auth },
    enableOfflineQueue: false,
    clusterRetryStrategy: retryStrategy(options.reconnectMaxMs),
    // A master that died: its slots' commands fail with "Connection is closed"; they are retried
    // after a slots refresh every 100 ms, at most 5 times (~0.5 s), then fail (fallback or 503)
    // until a replica has been promoted. MOVED after the promotion is followed at once.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: 5,
    slotsRefreshTimeout: 1000,
    slotsRefreshInterval: 2000,
    scaleReads: 'master',
  })
}
