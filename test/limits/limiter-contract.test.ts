import assert from 'node:assert/strict'
import { after, describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { BanPolicy, LimitDecision, RateLimiter } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { consumeOne, DAY_MS, freshState, MINUTE_MS } from '../../src/limits/policy.js'
import { systemClock } from '../../src/shared/clock.js'
import { LimiterUnavailableError } from '../../src/shared/outages.js'
import type { Quota } from '../../src/shared/plans.js'
import {
  DEFAULT_POLICY,
  FREE,
  fallbackCount,
  RUN_PREFIX,
  redisLimiter,
  redisUpGauge,
  timed,
  uniqueIdentity,
} from '../helpers/redis-limiter.js'
import { REDIS_URL, redisReachable, requireService } from '../helpers/services.js'
import { awayFromBoundary } from '../helpers/windows.js'

const SHORT_BANS: BanPolicy = { threshold: 3, baseSeconds: 1, maxSeconds: 3 }

// ---------- helpers ----------

const burst = (limiters: RateLimiter[], n: number, identity: string, quota: Quota) =>
  Promise.all(Array.from({ length: n }, (_, i) => limiters[i % limiters.length]!.consume(identity, quota)))

const countAllowed = (ds: LimitDecision[]) => ds.filter((d) => d.allowed).length

// ---------- the contract, run against every implementation ----------

interface Implementation {
  name: string
  /** False when the test must not run (the service is missing); skips or fails loudly. */
  available(t: TestContext): Promise<boolean>
  make(policy?: BanPolicy): RateLimiter
}

const implementations: Implementation[] = [
  {
    name: 'MemoryLimiter',
    available: async () => true,
    make: (policy = DEFAULT_POLICY) => new MemoryLimiter(systemClock, policy),
  },
  {
    name: 'RedisLimiter',
    available: (t) => requireService(t, 'Redis'),
    make: (policy) => redisLimiter(policy ? { policy } : {}).limiter,
  },
]

for (const impl of implementations) {
  describe(`RateLimiter contract: ${impl.name}`, () => {
    /** Makes a limiter closed after the test, or undefined when the test was skipped. */
    async function limiterFor(t: TestContext, policy?: BanPolicy): Promise<RateLimiter | undefined> {
      if (!(await impl.available(t))) return undefined
      const limiter = impl.make(policy)
      t.after(() => limiter.close())
      return limiter
    }

    for (const n of [100, 200]) {
      test(`exactly 60 of ${n} concurrent requests pass a 60/min quota, each counted once`, async (t) => {
        const limiter = await limiterFor(t)
        if (!limiter) return
        await awayFromBoundary(5000)
        const decisions = await burst([limiter], n, uniqueIdentity(), FREE)
        assert.equal(countAllowed(decisions), 60)
        const remaining = decisions.filter((d) => d.allowed).map((d) => d.minute.remaining)
        assert.deepEqual(
          remaining.sort((a, b) => a - b),
          Array.from({ length: 60 }, (_, i) => i),
        )
        // Rejection number 60 (the default threshold for 60/min) starts exactly one ban.
        assert.equal(decisions.filter((d) => d.banStarted).length, n - 60 >= 60 ? 1 : 0)
      })
    }

    test('a request refused by the day window does not count in the minute window', async (t) => {
      const limiter = await limiterFor(t)
      if (!limiter) return
      await awayFromBoundary(5000)
      const id = uniqueIdentity()
      const quota = { perMinute: 5, perDay: 3 }
      const ds = [] as LimitDecision[]
      for (let i = 0; i < 5; i++) ds.push(await limiter.consume(id, quota))
      assert.deepEqual(
        ds.map((d) => d.allowed),
        [true, true, true, false, false],
      )
      for (const d of ds.slice(3)) {
        assert.equal(d.reason, 'rate_limited')
        assert.equal(d.minute.remaining, 2)
        assert.equal(d.day.remaining, 0)
        assert.equal(d.retryAfter, Math.ceil(d.day.resetAt - d.now / 1000), 'retry when the day resets')
      }
    })

    test('a request refused by the minute window does not count in the day window', async (t) => {
      const limiter = await limiterFor(t)
      if (!limiter) return
      await awayFromBoundary(5000)
      const id = uniqueIdentity()
      const quota = { perMinute: 3, perDay: 5 }
      const ds = [] as LimitDecision[]
      for (let i = 0; i < 5; i++) ds.push(await limiter.consume(id, quota))
      assert.deepEqual(
        ds.map((d) => d.allowed),
        [true, true, true, false, false],
      )
      for (const d of ds.slice(3)) {
        assert.equal(d.minute.remaining, 0)
        assert.equal(d.day.remaining, 2)
      }
    })

    test('decisions carry the header data: limits, remaining, resets on the boundaries, retryAfter', async (t) => {
      const limiter = await limiterFor(t)
      if (!limiter) return
      await awayFromBoundary(5000)
      const id = uniqueIdentity()
      const quota = { perMinute: 4, perDay: 10 }
      const before = Date.now()
      const ds = [] as LimitDecision[]
      for (let i = 0; i < 5; i++) ds.push(await limiter.consume(id, quota))
      const afterMs = Date.now()
      for (const [i, d] of ds.entries()) {
        assert.ok(d.now >= before - 2000 && d.now <= afterMs + 2000, 'now is the deciding clock, in ms')
        assert.deepEqual(
          [d.minute.limit, d.day.limit, d.minute.resetAt, d.day.resetAt],
          [4, 10, Math.floor(d.now / MINUTE_MS) * 60 + 60, Math.floor(d.now / DAY_MS) * 86_400 + 86_400],
        )
        assert.equal(d.minute.remaining, Math.max(0, 3 - i))
        assert.equal(d.day.remaining, 10 - Math.min(i + 1, 4))
      }
      assert.ok(ds.slice(0, 4).every((d) => d.allowed && d.retryAfter === 0 && d.reason === undefined))
      const refused = ds[4]!
      assert.equal(refused.allowed, false)
      assert.equal(refused.reason, 'rate_limited')
      assert.equal(refused.retryAfter, Math.max(1, Math.ceil(refused.minute.resetAt - refused.now / 1000)))
      assert.ok(refused.retryAfter >= 1 && refused.retryAfter <= 60)
    })

    test('hammering while limited starts one ban (key_banned), which then holds', async (t) => {
      const limiter = await limiterFor(t, SHORT_BANS)
      if (!limiter) return
      await awayFromBoundary(5000)
      const ds = await burst([limiter], 30, uniqueIdentity(), { perMinute: 2, perDay: 100 })
      const reasons = ds.map((d) => d.reason ?? 'allowed')
      const count = (r: string) => reasons.filter((x) => x === r).length
      assert.deepEqual([count('allowed'), count('rate_limited'), count('key_banned')], [2, 2, 26])
      const started = ds.filter((d) => d.banStarted)
      assert.equal(started.length, 1, 'banStarted exactly once')
      assert.equal(started[0]!.reason, 'key_banned')
      assert.equal(started[0]!.retryAfter, 1)
      assert.ok(ds.filter((d) => d.reason === 'key_banned').every((d) => !d.allowed && d.retryAfter === 1))
      // A ban spends no window: the decisions keep the real counts (the day has 98 left, not 0).
      for (const d of ds.filter((x) => x.reason === 'key_banned')) assert.deepEqual([d.minute.remaining, d.day.remaining], [0, 98])
    })

    test('bans escalate (1 s, 2 s, then capped at 3 s) on real short waits', async (t) => {
      const limiter = await limiterFor(t, SHORT_BANS)
      if (!limiter) return
      await awayFromBoundary(8000)
      const id = uniqueIdentity()
      const quota = { perMinute: 1, perDay: 100 }
      const lengths: number[] = []
      for (let i = 0; i < 3; i++) {
        let start: LimitDecision | undefined
        for (let j = 0; j < 10 && !start; j++) {
          const d = await limiter.consume(id, quota)
          if (d.banStarted) start = d
        }
        assert.ok(start, 'a ban started')
        lengths.push(start.retryAfter)
        const during: LimitDecision = await limiter.consume(id, quota)
        assert.equal(during.reason, 'key_banned')
        assert.equal(during.banStarted, undefined)
        if (i < 2) await sleep(start.retryAfter * 1000 + 50)
      }
      assert.deepEqual(lengths, [1, 2, 3])
    })
  })
}

// ---------- Redis only ----------

const admin = () => new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 })

/** A Redis limiter with short bans and an admin connection to read its keys, both closed after `t`; undefined when Redis is not reachable. */
async function limiterAndAdmin(t: TestContext, leaseMax?: number) {
  if (!(await requireService(t, 'Redis'))) return undefined
  const { limiter } = redisLimiter({ policy: SHORT_BANS, ...(leaseMax === undefined ? {} : { leaseMax }) })
  const redis = admin()
  t.after(async () => {
    redis.disconnect()
    await limiter.close()
  })
  return { limiter, redis }
}

// This run's keys would otherwise linger for a day (their TTL) in a shared Redis.
after(async () => {
  if (!(await redisReachable())) return
  const redis = admin()
  try {
    const keys = await redis.keys(`${RUN_PREFIX}*`)
    if (keys.length > 0) await redis.del(...keys)
  } finally {
    redis.disconnect()
  }
})

describe('RedisLimiter: shared state in Redis', () => {
  test('three instances sharing one Redis let exactly 60 of 200 concurrent requests pass', async (t) => {
    if (!(await requireService(t, 'Redis'))) return
    const instances = [redisLimiter(), redisLimiter(), redisLimiter()]
    t.after(() => Promise.all(instances.map((h) => h.limiter.close())))
    await awayFromBoundary(5000)
    const decisions = await burst(
      instances.map((h) => h.limiter),
      200,
      uniqueIdentity(),
      FREE,
    )
    assert.equal(countAllowed(decisions), 60)
    for (const h of instances) assert.equal(await fallbackCount(h.metrics, 'open'), 0)
  })

  test('the script mirrors policy.consumeOne decision for decision (at the times Redis decided)', async (t) => {
    if (!(await requireService(t, 'Redis'))) return
    const policy: BanPolicy = { threshold: 2, baseSeconds: 1, maxSeconds: 2 }
    const { limiter } = redisLimiter({ policy })
    t.after(() => limiter.close())
    const quotas: Quota[] = [
      { perMinute: 1, perDay: 2 },
      { perMinute: 2, perDay: 3 },
      { perMinute: 3, perDay: 100 },
      { perMinute: 5, perDay: 4 },
    ]
    let seed = 42
    const random = () => {
      seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0
      return seed / 2 ** 32
    }
    const identities = [uniqueIdentity(), uniqueIdentity(), uniqueIdentity()]
    const mirrors = identities.map(() => freshState())
    for (let i = 0; i < 300; i++) {
      const who = Math.floor(random() * identities.length)
      const quota = quotas[Math.floor(random() * quotas.length)]!
      const got = await limiter.consume(identities[who]!, quota)
      assert.deepEqual(got, consumeOne(mirrors[who]!, got.now, quota, policy), `request ${i}`)
      // A few pauses let bans run out, so escalation and the way out of a ban are compared too.
      if (random() < 0.015) await sleep(400 + random() * 700)
    }
  })

  test('per-identity state is one hash-tagged key that expires on its own', async (t) => {
    const opened = await limiterAndAdmin(t)
    if (opened === undefined) return
    const { limiter, redis } = opened
    const plain = uniqueIdentity()
    const d = await limiter.consume(plain, FREE)
    const ttl = await redis.pttl(`${RUN_PREFIX}{${plain}}`)
    const untilMidnight = DAY_MS - (d.now % DAY_MS)
    assert.ok(Math.abs(ttl - untilMidnight) < 2000, `expires at the end of the UTC day (${ttl} vs ${untilMidnight})`)

    const banned = uniqueIdentity()
    await burst([limiter], 10, banned, { perMinute: 1, perDay: 100 })
    const bannedTtl = await redis.pttl(`${RUN_PREFIX}{${banned}}`)
    assert.ok(bannedTtl > DAY_MS && bannedTtl <= DAY_MS + 2000, 'the ban level is remembered 24 h after the ban')
  })

  // Regression: the script writes only the fields that changed and moves the expiry only when it
  // changes, judged against what the hash held before its windows rolled over. A hash kept alive
  // only by a ban level of yesterday must, on today's first request, be kept to the end of today.
  test('a state from an earlier day rolls over: every changed field written, the expiry moved', async (t) => {
    // One call per request (no leases), so the hash shows each request's writes.
    const opened = await limiterAndAdmin(t, 1)
    if (opened === undefined) return
    const { limiter, redis } = opened
    const id = uniqueIdentity()
    const key = `${RUN_PREFIX}{${id}}`
    const today = Date.now() - (Date.now() % DAY_MS)
    const yesterday = today - DAY_MS
    const levelExpiresAt = Date.now() + 5000
    await redis.hset(key, { ms: yesterday + 60_000, mc: 3, mr: 2, ds: yesterday, dc: 7, bu: 0, bl: 1, bx: levelExpiresAt })
    await redis.pexpireat(key, levelExpiresAt) // as the script left it: the ban level was all that mattered

    const d = await limiter.consume(id, FREE)
    assert.equal(d.allowed, true)
    assert.equal(d.day.remaining, FREE.perDay - 1, "yesterday's count is not today's")
    const minute = d.now - (d.now % MINUTE_MS)
    const day = d.now - (d.now % DAY_MS)
    assert.deepEqual(await redis.hgetall(key), {
      ms: String(minute),
      mc: '1',
      mr: '0',
      ds: String(day),
      dc: '1',
      bu: '0',
      bl: '1',
      bx: String(levelExpiresAt),
    })
    const ttl = await redis.pttl(key)
    const untilMidnight = day + DAY_MS - d.now
    assert.ok(Math.abs(ttl - untilMidnight) < 2000, `kept to the end of today (${ttl} ms vs ${untilMidnight} ms)`)

    // A second request in the same minute changes only the two counts and leaves the expiry alone.
    const second = await limiter.consume(id, FREE)
    assert.equal(second.minute.remaining, FREE.perMinute - 2)
    assert.equal((await redis.hget(key, 'dc')) ?? '', '2')
    assert.ok(Math.abs((await redis.pttl(key)) - (day + DAY_MS - second.now)) < 2000)
  })
})

// ---------- failure handling ----------

describe('RedisLimiter: when Redis is unreachable', () => {
  const unreachable = 'redis://127.0.0.1:1'

  // "Promptly" without a stopwatch: the command timeout is set far beyond the test's own timeout,
  // so a decision that waited for a command to time out would never arrive and the test would fail.
  const NEVER_MS = 10 * 60_000

  test('fail-open decides with the local fallback, promptly, and logs once', { timeout: 30_000 }, async (t) => {
    const h = redisLimiter({ url: unreachable, failurePolicy: 'open', commandTimeoutMs: NEVER_MS })
    t.after(() => h.limiter.close())
    const [first, ms] = await timed(() => h.limiter.consume(uniqueIdentity(), FREE))
    t.diagnostic(`fail-open: first decision with Redis down took ${ms.toFixed(1)} ms`)
    assert.equal(first.allowed, true)
    assert.equal(h.fallback.size, 1)

    const [decisions, burstMs] = await timed(() => burst([h.limiter], 100, uniqueIdentity(), FREE))
    t.diagnostic(`fail-open: 100 more decisions took ${burstMs.toFixed(1)} ms`)
    assert.equal(countAllowed(decisions), 60, 'the fallback still enforces the quota, per instance')
    assert.equal(await fallbackCount(h.metrics, 'open'), 101)
    assert.equal(await redisUpGauge(h.metrics), 0)
    // Redis never answered (a wrong REDIS_URL, or down at start): an error, once.
    assert.equal(h.log.errors.length, 1, 'one error line per outage')
    assert.equal(h.log.warns.length, 0)
    assert.doesNotMatch(JSON.stringify(h.log.errors), /k:/, 'no identity is logged')
    await assert.rejects(h.limiter.ping())
  })

  test('fail-closed throws LimiterUnavailableError promptly and never touches the fallback', { timeout: 30_000 }, async (t) => {
    const h = redisLimiter({ url: unreachable, failurePolicy: 'closed', commandTimeoutMs: NEVER_MS })
    t.after(() => h.limiter.close())
    for (let i = 0; i < 3; i++) await assert.rejects(h.limiter.consume(uniqueIdentity(), FREE), LimiterUnavailableError)
    assert.equal(h.fallback.size, 0)
    assert.equal(await fallbackCount(h.metrics, 'closed'), 3)
    assert.equal(h.log.errors.length, 1)
  })
})
