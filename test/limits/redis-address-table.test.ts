/**
 * The Redis limiter's bound on keyless addresses (LIMITER_MAX_ADDRESSES, consume.lua): a bounded
 * key space, never more than the plan for any address, keys exact, addresses kept from an earlier
 * day folded or re-admitted. Against the real Redis (skipped loudly when it is not reachable);
 * the in-memory limiter's side is test/limits/memory/address-table.test.ts.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, describe, type TestContext, test } from 'node:test'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { OVERFLOW_BUCKETS } from '../../src/limits/address-identities.js'
import type { BanPolicy } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { consumeOne, DAY_MS, freshState, type IdentityState, MINUTE_MS } from '../../src/limits/policy.js'
import { ADDRESS_TABLES, limiterKeys } from '../../src/limits/redis/limiter-keys.js'
import { ManualClock } from '../../src/shared/clock.js'
import type { Quota } from '../../src/shared/plans.js'
import { assertDecidedByRedis, RUN_PREFIX, redisLimiter } from '../helpers/redis-limiter.js'
import { REDIS_URL, redisReachable, requireService } from '../helpers/services.js'
import { awayFromBoundary } from '../helpers/windows.js'

const POLICY: BanPolicy = { threshold: 2, baseSeconds: 30, maxSeconds: 120 }
const QUOTA: Quota = { perMinute: 3, perDay: 8 }
const KEY_QUOTA: Quota = { perMinute: 5, perDay: 20 }
const address = (i: number) => `a:203.0.${i >> 8}.${i & 255}`

/** This file's keys live under RUN_PREFIX too, one prefix per limiter: each starts with empty tables. */
const freshPrefix = () => `${RUN_PREFIX}${randomUUID().slice(0, 8)}:`

const admin = () => new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 })

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

/** A Redis limiter under a prefix of its own and an admin connection, both closed after `t`; undefined without Redis. */
async function open(t: TestContext, maxAddresses: number) {
  if (!(await requireService(t, 'Redis'))) return undefined
  const prefix = freshPrefix()
  const { limiter } = redisLimiter({ policy: POLICY, keyPrefix: prefix, maxAddresses })
  const redis = admin()
  t.after(async () => {
    redis.disconnect()
    await limiter.close()
  })
  return { limiter, redis, prefix }
}

describe('RedisLimiter: the keyless address table', () => {
  test('at most LIMITER_MAX_ADDRESSES address keys, one count per table, at most OVERFLOW_BUCKETS overflow counters', async (t) => {
    const opened = await open(t, 32)
    if (!opened) return
    const { limiter, redis, prefix } = opened
    for (let i = 0; i < 600; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => limiter.consume(address(i + j), QUOTA)))
    const keys = await redis.keys(`${prefix}*`)
    const addresses = keys.filter((k) => k.includes('}:a:'))
    const counts = keys.filter((k) => k.endsWith('}:count'))
    const overflow = keys.filter((k) => k.includes('}:overflow:'))
    assert.equal(addresses.length, 32, `${ADDRESS_TABLES} tables of 2`)
    assert.equal(counts.length, ADDRESS_TABLES)
    assert.ok(overflow.length > 0 && overflow.length <= OVERFLOW_BUCKETS)
    assert.equal(keys.length, addresses.length + counts.length + overflow.length, 'nothing else')
    // Each key sits in its table's slot: the hash tag names the table.
    for (const key of addresses) assert.match(key, /\{addresses:\d+\}:a:/)
  })

  test('property: no address passes more than its plan, keys decide as alone; all exact or all shared decide as the in-memory limiter', async (t) => {
    if (!(await requireService(t, 'Redis'))) return
    const step = fc.oneof(
      { weight: 8, arbitrary: fc.record({ key: fc.constant(false), who: fc.nat(29) }) },
      { weight: 1, arbitrary: fc.record({ key: fc.constant(true), who: fc.nat(2) }) },
    )
    const bound = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 48 }), fc.constant(10_000))
    await fc.assert(
      fc.asyncProperty(bound, fc.array(step, { minLength: 20, maxLength: 150, size: 'max' }), async (maxAddresses, steps) => {
        const harness = redisLimiter({ policy: POLICY, keyPrefix: freshPrefix(), maxAddresses })
        const { limiter } = harness
        // With every address in the table, or none, the in-memory limiter is an exact model.
        const clock = new ManualClock(0)
        const model = maxAddresses === 0 || maxAddresses === 10_000 ? new MemoryLimiter(clock, POLICY, { maxAddresses }) : undefined
        const passed = new Map<string, number>()
        const keys = new Map<number, IdentityState>()
        const count = (k: string) => passed.set(k, (passed.get(k) ?? 0) + 1).get(k)!
        try {
          for (const [i, s] of steps.entries()) {
            if (s.key) {
              const got = await limiter.consume(`k:${s.who}`, KEY_QUOTA)
              assertDecidedByRedis(harness, `key request ${i}`)
              const state = keys.get(s.who) ?? keys.set(s.who, freshState()).get(s.who)!
              assert.deepEqual(got, consumeOne(state, got.now, KEY_QUOTA, POLICY), `key request ${i}`)
              continue
            }
            const got = await limiter.consume(address(s.who), QUOTA)
            // A decision of the fallback comes on top of Redis' counts: first say that it happened.
            assertDecidedByRedis(harness, `request ${i}`)
            if (model) {
              clock.set(got.now)
              assert.deepEqual(got, model.consumeSync(address(s.who), QUOTA), `request ${i} (bound ${maxAddresses})`)
            }
            if (got.allowed) {
              assert.ok(count(`${s.who}|minute|${got.now - (got.now % MINUTE_MS)}`) <= QUOTA.perMinute, `${address(s.who)} over its minute`)
              assert.ok(count(`${s.who}|day|${got.now - (got.now % DAY_MS)}`) <= QUOTA.perDay, `${address(s.who)} over its day`)
            }
          }
        } finally {
          await limiter.close()
          await model?.close()
        }
      }),
      // The failed assertion in the report: fast-check 4 otherwise keeps it in the error's cause,
      // which the test runner does not print (a CI run showed only the counterexample, and its
      // seed replayed green: what failed depended on time, and the message is what says which).
      { numRuns: 25, includeErrorInReport: true },
    )
  })

  test('keys stay exact while every table and overflow counter is full and banned', async (t) => {
    const opened = await open(t, 16)
    if (!opened) return
    const { limiter } = opened
    for (let i = 0; i < 400; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => Promise.all(Array.from({ length: 5 }, () => limiter.consume(address(i + j), QUOTA)))),
      )
    }
    const id = `k:${randomUUID()}`
    const state = freshState()
    for (let i = 0; i < 12; i++) {
      const got = await limiter.consume(id, KEY_QUOTA)
      assert.deepEqual(got, consumeOne(state, got.now, KEY_QUOTA, POLICY), `request ${i}`)
    }
  })

  test('an address kept from an earlier day by its ban: folded into its overflow counter when the table is full, re-admitted with its ban when not', async (t) => {
    const opened = await open(t, ADDRESS_TABLES) // one address a day per table
    if (!opened) return
    const { limiter, redis, prefix } = opened
    const now = Date.now()
    const today = now - (now % DAY_MS)
    const yesterday = today - DAY_MS
    const banned = { ms: yesterday, mc: 3, mr: 0, ds: yesterday, dc: 8, bu: now + 60_000, bl: 1, bx: now + 60_000 + DAY_MS, td: yesterday }

    const [full, fullCount, fullOverflow] = limiterKeys(prefix, address(1)) as [string, string, string]
    await redis.hset(full, banned)
    await redis.hset(fullCount, { day: today, n: 1 }) // today's one admission is taken
    const refused = await limiter.consume(address(1), QUOTA)
    assert.equal(refused.reason, 'key_banned', 'the ban holds in the overflow counter')
    assert.equal(await redis.exists(full), 0, 'the address key is gone')
    assert.deepEqual(await redis.hmget(fullOverflow, 'bu', 'bl'), [String(banned.bu), '1'])
    assert.ok((await redis.pttl(fullOverflow)) > DAY_MS, 'kept as long as the ban level')

    // An address of another table, which has room.
    const other = address(Array.from({ length: 100 }, (_, i) => i + 2).find((i) => limiterKeys(prefix, address(i))[1] !== fullCount)!)
    const [roomy, roomyCount] = limiterKeys(prefix, other) as [string, string, string]
    await redis.hset(roomy, banned)
    const stillBanned = await limiter.consume(other, QUOTA)
    assert.equal(stillBanned.reason, 'key_banned')
    assert.deepEqual(
      await redis.hmget(roomy, 'td', 'bu', 'dc'),
      [String(today), String(banned.bu), '0'],
      "re-admitted today, yesterday's count gone",
    )
    assert.deepEqual(await redis.hmget(roomyCount, 'day', 'n'), [String(today), '1'])
  })

  test('an address admitted after being counted in its overflow counter starts from that counter', async (t) => {
    const opened = await open(t, 0)
    if (!opened) return
    const { limiter, redis, prefix } = opened
    await awayFromBoundary(5000)
    for (let i = 0; i < 3; i++) assert.equal((await limiter.consume(address(3), QUOTA)).allowed, true)
    const [own, count] = limiterKeys(prefix, address(3)) as [string, string, string]
    assert.equal(await redis.exists(own), 0, 'counted in the overflow counter')
    // The table gets room (as on the next day: a bound of 0 admits nobody, so the count is set by hand to a day before).
    const roomy = redisLimiter({ policy: POLICY, keyPrefix: prefix, maxAddresses: ADDRESS_TABLES }).limiter
    t.after(() => roomy.close())
    await redis.hset(count, { day: 0, n: 0 })
    const moved = await roomy.consume(address(3), QUOTA)
    assert.equal(await redis.exists(own), 1, 'admitted')
    assert.equal(moved.allowed, false, 'the 3 let through in the shared counter still count')
    assert.equal(moved.day.remaining, QUOTA.perDay - 3)
  })

  test('peek reads an address past the bound in its overflow counter', async (t) => {
    const opened = await open(t, 0)
    if (!opened) return
    const { limiter } = opened
    for (let i = 0; i < 2; i++) await limiter.consume(address(7), QUOTA)
    const seen = await limiter.peek(address(7), QUOTA)
    assert.equal(seen.minute.used, 2)
  })
})
