/**
 * ioredis' connect and socket timeouts are timers, and a stalled event loop runs its expired timers
 * before it reads the answer that arrived meanwhile: a stall longer than the socket timeout, with a
 * command in flight, drops a healthy connection, and the limiter decides that request and the next
 * ones (until it has reconnected) with its fallback. On a loaded CI machine such a stall put the
 * fallback's admissions on top of Redis' in a test of Redis' decisions, so the test harness
 * (test/helpers/redis-limiter.ts) widens the bounds; this file shows both sides.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, test } from 'node:test'
import { Redis } from 'ioredis'
import { REDIS_TIMEOUTS } from '../../../src/limits/redis/connection.js'
import { assertDecidedByRedis, fallbackCount, type RedisHarness, RUN_PREFIX, redisLimiter } from '../../helpers/redis-limiter.js'
import { REDIS_URL, redisReachable, requireService } from '../../helpers/services.js'

const QUOTA = { perMinute: 100, perDay: 1000 }
const prefix = `${RUN_PREFIX}stall:${randomUUID().slice(0, 8)}:`

after(async () => {
  if (!(await redisReachable())) return
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 })
  try {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  } finally {
    redis.disconnect()
  }
})

/** Blocks the event loop for `ms` once the poll phase has run: the command has been written, its answer not read. */
function stallAfterWrite(ms: number): void {
  setImmediate(() => {
    const end = performance.now() + ms
    while (performance.now() < end) {
      // a synchronous stall: a long GC pause, a starved process on a loaded machine
    }
  })
}

/** One address's request with a stall of `stallMs` while it is in flight; the limiter is connected and warm. */
async function requestThroughStall(h: RedisHarness, stallMs: number) {
  await h.limiter.consume('a:198.51.100.7', QUOTA)
  assertDecidedByRedis(h, 'the request before the stall')
  const pending = h.limiter.consume('a:198.51.100.7', QUOTA)
  stallAfterWrite(stallMs)
  return pending
}

test('a stall longer than the socket timeout drops the connection: the fallback decides, and the log says so', async (t) => {
  if (!(await requireService(t, 'Redis'))) return
  // A bound far above the pauses of a busy machine, so that only the stall trips it.
  const h = redisLimiter({ keyPrefix: prefix, socketTimeoutMs: 1000 })
  t.after(() => h.limiter.close())
  await requestThroughStall(h, 1300)
  assert.equal(await fallbackCount(h.metrics, 'open'), 1)
  assert.throws(() => assertDecidedByRedis(h), /Socket timeout/)
})

test(`the test harness's bounds outlast a stall longer than the service's socket timeout (${REDIS_TIMEOUTS.socketMs} ms)`, async (t) => {
  if (!(await requireService(t, 'Redis'))) return
  const h = redisLimiter({ keyPrefix: prefix })
  t.after(() => h.limiter.close())
  const decision = await requestThroughStall(h, REDIS_TIMEOUTS.socketMs + 200)
  assert.equal(decision.allowed, true)
  assert.equal(await fallbackCount(h.metrics, 'open'), 0)
  assertDecidedByRedis(h)
})
