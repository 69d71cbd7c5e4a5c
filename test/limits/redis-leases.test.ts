/**
 * Quota leases on a real Redis, over three instances (three RedisLimiters, each its own connection):
 * what they admit together is exactly what one call per request would admit, each admission has a
 * number of its own, and a busy key costs a few calls instead of one per request. The lease logic
 * against a model, on a simulated clock with skew and delays: redis/leases.test.ts.
 */
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { LimitDecision, RateLimiter } from '../../src/limits/limiter.js'
import type { Metrics } from '../../src/ops/metrics.js'
import type { Quota } from '../../src/shared/plans.js'
import { fallbackCount, RUN_PREFIX, redisLimiter, uniqueIdentity } from '../helpers/redis-limiter.js'
import { REDIS_URL, redisReachable, requireService } from '../helpers/services.js'
import { awayFromBoundary } from '../helpers/windows.js'

/** Script calls a limiter made to Redis (animal_store_limiter_redis_calls_total). */
async function callsMade(metrics: Metrics): Promise<number> {
  const { values } = await metrics.limiterCalls.get()
  return values[0]?.value ?? 0
}

/** Sends `total` requests from the instances in random order, `concurrency` in flight at a time. */
async function traffic(limiters: RateLimiter[], identity: string, quota: Quota, total: number, concurrency: number) {
  const decisions: LimitDecision[] = []
  let sent = 0
  let seed = 7
  const random = () => {
    seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0
    return seed / 2 ** 32
  }
  const worker = async () => {
    while (sent < total) {
      sent++
      const limiter = limiters[Math.floor(random() * limiters.length)]!
      decisions.push(limiter.consumeSync?.(identity, quota) ?? (await limiter.consume(identity, quota)))
      if (random() < 0.05) await sleep(1)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return decisions
}

test('three instances leasing from one Redis admit exactly the limit, each admission under a number of its own', async (t) => {
  if (!(await requireService(t, 'Redis'))) return
  const instances = [redisLimiter(), redisLimiter(), redisLimiter()]
  t.after(() => Promise.all(instances.map((h) => h.limiter.close())))
  const quota: Quota = { perMinute: 2_000, perDay: 1_000_000 }
  await awayFromBoundary(30_000)
  const identity = uniqueIdentity()
  const decisions = await traffic(
    instances.map((h) => h.limiter),
    identity,
    quota,
    3_000,
    60,
  )
  const admitted = decisions.filter((d) => d.allowed)
  // Every instance keeps receiving requests after Redis has handed out the last number, so each
  // uses up its run: nothing is left unused, and exactly the limit is admitted.
  assert.equal(admitted.length, quota.perMinute)
  const numbers = admitted.map((d) => quota.perMinute - d.minute.remaining - 1).sort((a, b) => a - b)
  assert.deepEqual(
    numbers,
    Array.from({ length: quota.perMinute }, (_, i) => i),
    'admission numbers 0..limit-1, each once',
  )
  assert.equal(new Set(admitted.map((d) => d.day.remaining)).size, quota.perMinute, 'day numbers distinct too')
  // Refusals were each counted in Redis (toward a ban): 1,000 over a threshold of 2,000 started none.
  assert.equal(decisions.filter((d) => d.reason === 'key_banned').length, 0)
  for (const h of instances) assert.equal(await fallbackCount(h.metrics, 'open'), 0)
  // What the instances peek agrees with Redis once the runs are used up: all of the minute used.
  const peeked = await instances[0]!.limiter.peek(identity, quota)
  assert.equal(peeked.minute.used, quota.perMinute)
})

test('a busy key costs a few calls to Redis, not one per request', async (t) => {
  if (!(await requireService(t, 'Redis'))) return
  const { limiter, metrics } = redisLimiter()
  t.after(() => limiter.close())
  const quota: Quota = { perMinute: 1_000_000, perDay: 10_000_000 }
  await awayFromBoundary(30_000)
  const decisions = await traffic([limiter], uniqueIdentity(), quota, 5_000, 50)
  assert.equal(decisions.filter((d) => d.allowed).length, 5_000)
  const calls = await callsMade(metrics)
  assert.ok(calls < 250, `${calls} calls for 5,000 requests`)

  // LIMITER_LEASE_MAX=1: one call per request, as before leases.
  const plain = redisLimiter({ leaseMax: 1 })
  t.after(() => plain.limiter.close())
  await traffic([plain.limiter], uniqueIdentity(), quota, 500, 50)
  assert.equal(await callsMade(plain.metrics), 500)
})

test("peek hands back this instance's unused run: it agrees with the last answer's Remaining", async (t) => {
  if (!(await requireService(t, 'Redis'))) return
  const { limiter } = redisLimiter()
  t.after(() => limiter.close())
  const quota: Quota = { perMinute: 10_000, perDay: 100_000 }
  await awayFromBoundary(30_000)
  const identity = uniqueIdentity()
  let last: LimitDecision | undefined
  for (let i = 0; i < 100; i++) last = limiter.consumeSync(identity, quota) ?? (await limiter.consume(identity, quota))
  const peeked = await limiter.peek(identity, quota)
  assert.equal(peeked.minute.used, 100)
  assert.equal(peeked.minute.remaining, last!.minute.remaining)
  assert.equal(peeked.day.remaining, last!.day.remaining)
})

test('a ban Redis answered is kept: the banned identity is refused without a call until it ends, exactly as Redis would', async (t) => {
  if (!(await requireService(t, 'Redis'))) return
  const policy = { threshold: 3, baseSeconds: 2, maxSeconds: 2 }
  const { limiter, metrics } = redisLimiter({ policy })
  const { limiter: plain } = redisLimiter({ policy, leaseMax: 1 })
  t.after(() => Promise.all([limiter.close(), plain.close()]))
  const quota: Quota = { perMinute: 5, perDay: 100 }
  await awayFromBoundary(20_000)
  for (const address of [false, true]) {
    // A key, then a keyless address (decided call by call, but its ban is kept too).
    const identity = address ? `a:198.51.100.${Math.floor(Math.random() * 250)}` : uniqueIdentity()
    const first: LimitDecision[] = []
    for (let i = 0; i < 8; i++) first.push(limiter.consumeSync(identity, quota) ?? (await limiter.consume(identity, quota)))
    assert.deepEqual(
      first.map((d) => d.reason ?? 'allowed'),
      ['allowed', 'allowed', 'allowed', 'allowed', 'allowed', 'rate_limited', 'rate_limited', 'key_banned'],
    )
    const calls = await callsMade(metrics)
    const during = await Promise.all(Array.from({ length: 50 }, () => limiter.consume(identity, quota)))
    assert.equal(await callsMade(metrics), calls, 'refused during the ban without a call')
    // What Redis answers to the same identity at that moment (a limiter without leases asks it).
    const redisSays = await plain.consume(identity, quota)
    for (const d of during) {
      assert.equal(d.reason, 'key_banned')
      assert.equal(d.minute.remaining, redisSays.minute.remaining)
      assert.equal(d.day.remaining, redisSays.day.remaining)
      assert.ok(d.retryAfter >= redisSays.retryAfter && d.retryAfter <= 2, `Retry-After ${d.retryAfter} (Redis: ${redisSays.retryAfter})`)
    }
    // After the ban Redis decides again: the minute window is still spent, so a counted refusal.
    await sleep(2_100)
    const after = await limiter.consume(identity, quota)
    assert.equal(after.reason, 'rate_limited')
    assert.equal(await callsMade(metrics), calls + 1)
  }
})

// This run's keys would otherwise linger for a day (their TTL) in a shared Redis.
after(async () => {
  if (!(await redisReachable())) return
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()
  const keys = await redis.keys(`${RUN_PREFIX}*`)
  if (keys.length > 0) await redis.del(...keys)
  redis.disconnect()
})
