import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, describe, test, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import { systemClock } from '../../src/clock.js'
import type { Quota } from '../../src/keys/plans.js'
import { LimiterUnavailableError, type BanPolicy, type LimitDecision, type RateLimiter } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { consumeOne, DAY_MS, freshState, MINUTE_MS } from '../../src/limits/policy.js'
import { RedisLimiter, type RedisLimiterOptions } from '../../src/limits/redis/redis-limiter.js'
import { Metrics } from '../../src/ops/metrics.js'
import { REDIS_URL, REQUIRE_SERVICES, redisReachable, requireService } from '../helpers/services.js'

// One run's keys live under their own prefix: parallel runs never collide, and cleanup is exact.
const RUN_PREFIX = `as:test:${randomUUID()}:`
const DEFAULT_POLICY: BanPolicy = { threshold: 0, baseSeconds: 60, maxSeconds: 3600 }
const SHORT_BANS: BanPolicy = { threshold: 3, baseSeconds: 1, maxSeconds: 3 }
const FREE: Quota = { perMinute: 60, perDay: 1000 }

let seq = 0
const uniqueIdentity = () => `k:${process.pid}-${++seq}-${randomUUID().slice(0, 8)}`

// ---------- helpers ----------

class RecordingLog {
  readonly errors: unknown[][] = []
  readonly warns: unknown[][] = []
  readonly infos: unknown[][] = []
  error = (...args: unknown[]) => void this.errors.push(args)
  warn = (...args: unknown[]) => void this.warns.push(args)
  info = (...args: unknown[]) => void this.infos.push(args)
}

interface RedisHarness {
  limiter: RedisLimiter
  fallback: MemoryLimiter
  metrics: Metrics
  log: RecordingLog
}

function redisLimiter(options: Partial<RedisLimiterOptions> & { policy?: BanPolicy } = {}): RedisHarness {
  const policy = options.policy ?? DEFAULT_POLICY
  const fallback = new MemoryLimiter(systemClock, policy)
  const metrics = new Metrics({ defaultMetrics: false })
  const log = new RecordingLog()
  const limiter = new RedisLimiter({ url: REDIS_URL, keyPrefix: RUN_PREFIX, fallback, metrics, log, ...options, policy })
  return { limiter, fallback, metrics, log }
}

async function fallbackCount(metrics: Metrics, policy: 'open' | 'closed'): Promise<number> {
  const { values } = await metrics.limiterFallback.get()
  return values.find((v) => v.labels.policy === policy)?.value ?? 0
}

async function redisUpGauge(metrics: Metrics): Promise<number | undefined> {
  const { values } = await metrics.dependencyUp.get()
  return values.find((v) => v.labels.dependency === 'redis')?.value
}

/**
 * Tests on a real clock must not straddle a window boundary: waits until at least `needMs`
 * remain in the current minute (and day), and the minute is not just starting (clock skew).
 */
async function awayFromBoundary(needMs: number): Promise<void> {
  const now = Date.now()
  const intoMinute = now % MINUTE_MS
  const leftInDay = DAY_MS - (now % DAY_MS)
  if (MINUTE_MS - intoMinute >= needMs && intoMinute >= 300 && leftInDay >= needMs) return
  await sleep(MINUTE_MS - intoMinute + 300)
}

const burst = (limiters: RateLimiter[], n: number, identity: string, quota: Quota) =>
  Promise.all(Array.from({ length: n }, (_, i) => limiters[i % limiters.length]!.consume(identity, quota)))

const countAllowed = (ds: LimitDecision[]) => ds.filter((d) => d.allowed).length

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now()
  const value = await fn()
  return [value, performance.now() - start]
}

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
        assert.deepEqual(remaining.sort((a, b) => a - b), Array.from({ length: 60 }, (_, i) => i))
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
      assert.deepEqual(ds.map((d) => d.allowed), [true, true, true, false, false])
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
      assert.deepEqual(ds.map((d) => d.allowed), [true, true, true, false, false])
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
    const decisions = await burst(instances.map((h) => h.limiter), 200, uniqueIdentity(), FREE)
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
    const random = () => (seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32
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
    if (!(await requireService(t, 'Redis'))) return
    const { limiter } = redisLimiter({ policy: SHORT_BANS })
    const redis = admin()
    t.after(async () => {
      redis.disconnect()
      await limiter.close()
    })
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
})

// ---------- failure handling ----------

describe('RedisLimiter: when Redis is unreachable', () => {
  const unreachable = 'redis://127.0.0.1:1'

  test('fail-open decides with the local fallback, promptly, and logs once', async (t) => {
    const h = redisLimiter({ url: unreachable, failurePolicy: 'open' })
    t.after(() => h.limiter.close())
    const [first, ms] = await timed(() => h.limiter.consume(uniqueIdentity(), FREE))
    t.diagnostic(`fail-open: first decision with Redis down took ${ms.toFixed(1)} ms`)
    assert.ok(ms < 1000, `decided in ${ms} ms`)
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

  test('fail-closed throws LimiterUnavailableError promptly and never touches the fallback', async (t) => {
    const h = redisLimiter({ url: unreachable, failurePolicy: 'closed' })
    t.after(() => h.limiter.close())
    for (let i = 0; i < 3; i++) {
      const start = performance.now()
      await assert.rejects(h.limiter.consume(uniqueIdentity(), FREE), LimiterUnavailableError)
      assert.ok(performance.now() - start < 1000)
    }
    assert.equal(h.fallback.size, 0)
    assert.equal(await fallbackCount(h.metrics, 'closed'), 3)
    assert.equal(h.log.errors.length, 1)
  })
})

// ---------- outage and recovery, on a throwaway redis-server ----------

class ThrowawayRedis {
  private child: ChildProcess | undefined
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    )
    this.child = child
    const deadline = Date.now() + 5000
    while (!(await portOpen(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on ${this.port}`)
      await sleep(20)
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal)
  }

  async stop(): Promise<void> {
    const child = this.child
    this.child = undefined
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    socket.once('connect', () => (socket.destroy(), resolve(true)))
    socket.once('error', () => (socket.destroy(), resolve(false)))
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** Throwaway servers need the redis-server binary: skip loudly without it, fail under REQUIRE_SERVICES. */
function redisServerBinary(t: TestContext): boolean {
  if (spawnSync('redis-server', ['--version']).status === 0) return true
  if (REQUIRE_SERVICES) throw new Error('redis-server is required (REQUIRE_SERVICES=1) but not on PATH')
  process.stderr.write(`\n!!! SKIPPED: redis-server not on PATH — "${t.name}" did not run !!!\n\n`)
  t.skip('redis-server not on PATH')
  return false
}

/** Consumes every `everyMs` until `done(decidedByRedis)`; returns the elapsed ms and the slowest decision. */
async function pollUntil(
  h: RedisHarness,
  done: (fromRedis: boolean) => boolean,
  limitMs: number,
  everyMs = 25,
): Promise<{ elapsed: number; slowest: number }> {
  const start = performance.now()
  let slowest = 0
  for (;;) {
    const before = await fallbackCount(h.metrics, 'open')
    const [, ms] = await timed(() => h.limiter.consume(uniqueIdentity(), FREE))
    slowest = Math.max(slowest, ms)
    const fromRedis = (await fallbackCount(h.metrics, 'open')) === before
    if (done(fromRedis)) return { elapsed: performance.now() - start, slowest }
    if (performance.now() - start > limitMs) throw new Error(`condition not reached within ${limitMs} ms`)
    await sleep(everyMs)
  }
}

describe('RedisLimiter: outage and recovery (throwaway redis-server)', () => {
  test('falls back when Redis dies and decides with Redis again once it is back, without a restart', async (t) => {
    if (!redisServerBinary(t)) return
    const server = new ThrowawayRedis(await freePort())
    t.after(() => server.stop())
    await server.start()
    const h = redisLimiter({ url: server.url, failurePolicy: 'open' })
    t.after(() => h.limiter.close())

    const id = uniqueIdentity()
    assert.equal((await h.limiter.consume(id, FREE)).allowed, true)
    assert.equal(await fallbackCount(h.metrics, 'open'), 0, 'decided by Redis')
    assert.equal(await redisUpGauge(h.metrics), 1)

    await server.stop()
    const down = await pollUntil(h, (fromRedis) => !fromRedis, 3000)
    t.diagnostic(`outage: first fallback decision ${down.elapsed.toFixed(0)} ms after the kill; slowest decision ${down.slowest.toFixed(1)} ms`)
    assert.ok(down.slowest < 1000)
    await assert.rejects(h.limiter.ping())
    assert.equal(await redisUpGauge(h.metrics), 0)
    // Let the reconnection backoff reach its cap (1 s), as in a real outage of a few seconds.
    await sleep(2600)

    await server.start()
    const up = await pollUntil(h, (fromRedis) => fromRedis, 5000)
    t.diagnostic(`recovery: decisions from Redis again ${up.elapsed.toFixed(0)} ms after it accepted connections`)
    assert.ok(up.elapsed < 3000, `recovered in ${up.elapsed} ms`)
    await h.limiter.ping()
    assert.equal(await redisUpGauge(h.metrics), 1)
    assert.equal(h.log.warns.length, 1, 'one warning for the outage')
    assert.equal(h.log.infos.length, 1, 'one notice for the recovery')
  })

  test('a hung Redis costs at most the command timeout before falling back, and heals when it resumes', async (t) => {
    if (!redisServerBinary(t)) return
    const server = new ThrowawayRedis(await freePort())
    t.after(async () => {
      server.signal('SIGCONT')
      await server.stop()
    })
    await server.start()
    const h = redisLimiter({ url: server.url, failurePolicy: 'open' })
    t.after(() => h.limiter.close())
    assert.equal((await h.limiter.consume(uniqueIdentity(), FREE)).allowed, true)

    server.signal('SIGSTOP')
    const batch = () =>
      Promise.all(Array.from({ length: 20 }, () => timed(() => h.limiter.consume(uniqueIdentity(), FREE)).then(([, ms]) => ms)))
    // Requests already in flight when the server hangs each wait out the command timeout...
    const first = await batch()
    t.diagnostic(`hung Redis: requests in flight decided after ${Math.min(...first).toFixed(0)}-${Math.max(...first).toFixed(0)} ms`)
    assert.ok(Math.max(...first) < 800)
    assert.equal(await fallbackCount(h.metrics, 'open'), 20)
    // ...then a single probe waits while the others decide at once...
    const second = await batch()
    assert.ok(second.filter((ms) => ms > 100).length <= 1, `only the probe waits: ${second.map((ms) => ms.toFixed(0))}`)
    // ...and once the socket timeout drops the dead connection, nobody waits.
    await sleep(2500)
    const third = await batch()
    t.diagnostic(`hung Redis: after the socket timeout, slowest decision ${Math.max(...third).toFixed(1)} ms`)
    assert.ok(Math.max(...third) < 100)

    server.signal('SIGCONT')
    const up = await pollUntil(h, (fromRedis) => fromRedis, 6000)
    t.diagnostic(`hung Redis: decisions from Redis again ${up.elapsed.toFixed(0)} ms after it resumed`)
    assert.equal(h.log.warns.length, 1)
    assert.equal(h.log.infos.length, 1)
  })
})
