/**
 * peek(): an identity's counters as the next request would find them, counting nothing, equal to
 * what the last decision (the headers) showed; on the in-memory limiter, on Redis, and on Redis'
 * fallback while Redis is unreachable.
 */
import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import type { BanPolicy, LimitDecision, RateLimiter } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { DAY_MS, freshState, MINUTE_MS, peekState } from '../../src/limits/policy.js'
import { ManualClock, systemClock } from '../../src/shared/clock.js'
import { LimiterUnavailableError } from '../../src/shared/outages.js'
import { redisLimiter, uniqueIdentity } from '../helpers/redis-limiter.js'
import { requireService } from '../helpers/services.js'
import { awayFromBoundary } from '../helpers/windows.js'

const SMALL = { perMinute: 5, perDay: 8 }
const BANS: BanPolicy = { threshold: 2, baseSeconds: 30, maxSeconds: 300 }

const implementations: Array<{ name: string; make(t: TestContext): Promise<RateLimiter | undefined> }> = [
  { name: 'MemoryLimiter', make: async () => new MemoryLimiter(systemClock, BANS) },
  {
    name: 'RedisLimiter',
    async make(t) {
      if (!(await requireService(t, 'Redis'))) return undefined
      return redisLimiter({ policy: BANS }).limiter
    },
  },
]

for (const impl of implementations) {
  describe(`peek: ${impl.name}`, () => {
    test('equals the last decision, counts nothing, shows a ban and its level', async (t) => {
      const limiter = await impl.make(t)
      if (!limiter) return
      t.after(() => limiter.close())
      await awayFromBoundary(5000)
      const id = uniqueIdentity()
      const fresh = await limiter.peek(id, SMALL)
      assert.deepEqual(
        [fresh.minute.used, fresh.minute.remaining, fresh.day.used, fresh.ban],
        [0, 5, 0, { active: false, until: null, level: 0 }],
      )
      let last: LimitDecision | undefined
      for (let i = 0; i < 3; i++) last = await limiter.consume(id, SMALL)
      const seen = await limiter.peek(id, SMALL)
      assert.deepEqual(seen.minute, { limit: 5, used: 3, remaining: last!.minute.remaining, resetAt: last!.minute.resetAt })
      assert.deepEqual(seen.day, { limit: 8, used: 3, remaining: last!.day.remaining, resetAt: last!.day.resetAt })
      // Another peek may fall in the next millisecond: everything but its clock must be the same.
      const { now: _later, ...again } = await limiter.peek(id, SMALL)
      const { now: _first, ...before } = seen
      assert.deepEqual(again, before, 'peeking counts nothing')
      for (let i = 0; i < 2; i++) await limiter.consume(id, SMALL)
      // Two refusals (threshold 2) start a ban of 30 s at level 1.
      await limiter.consume(id, SMALL)
      const banStart = await limiter.consume(id, SMALL)
      assert.equal(banStart.banStarted, true)
      const banned = await limiter.peek(id, SMALL)
      assert.equal(banned.ban.active, true)
      assert.equal(banned.ban.level, 1)
      assert.ok(Math.abs(banned.ban.until! - (banStart.now / 1000 + 30)) <= 1, `ban until ${banned.ban.until}`)
      assert.deepEqual([banned.minute.used, banned.minute.remaining], [5, 0])
    })
  })
}

test('peekState applies the roll-over and decay rules: a past window reads 0, a decayed level 0', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 30)
  const minuteStart = now - (now % MINUTE_MS)
  const dayStart = now - (now % DAY_MS)
  const s = {
    ...freshState(),
    minuteStart: minuteStart - MINUTE_MS,
    minuteCount: 5,
    dayStart,
    dayCount: 7,
    banLevel: 2,
    banLevelExpiresAt: now - 1,
  }
  const p = peekState(s, now, SMALL)
  assert.deepEqual([p.minute.used, p.minute.remaining, p.day.used, p.day.remaining, p.ban.level], [0, 5, 7, 1, 0])
  assert.equal(p.minute.resetAt, (minuteStart + MINUTE_MS) / 1000)
  assert.equal(p.day.resetAt, (dayStart + DAY_MS) / 1000)
  const yesterday = peekState({ ...s, dayStart: dayStart - DAY_MS }, now, SMALL)
  assert.equal(yesterday.day.used, 0)
})

test('the memory limiter peeks on its own clock and never marks its state dirty', async () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 30))
  const limiter = new MemoryLimiter(clock, BANS)
  limiter.consumeSync('k:a', SMALL)
  clock.advance(MINUTE_MS)
  const p = await limiter.peek('k:a', SMALL)
  assert.deepEqual([p.minute.used, p.day.used, p.now], [0, 1, clock.now()])
  assert.deepEqual(await limiter.writeState(), false, 'nothing to write after a peek')
  await limiter.close()
})

test('Redis unreachable: peek reads the fallback (open) or refuses (closed)', async (t) => {
  const open = redisLimiter({ url: 'redis://127.0.0.1:1', failurePolicy: 'open' })
  const closed = redisLimiter({ url: 'redis://127.0.0.1:1', failurePolicy: 'closed' })
  t.after(async () => {
    await open.limiter.close()
    await closed.limiter.close()
  })
  const id = uniqueIdentity()
  await open.limiter.consume(id, SMALL)
  assert.equal((await open.limiter.peek(id, SMALL)).minute.used, 1)
  await assert.rejects(closed.limiter.peek(id, SMALL), LimiterUnavailableError)
})
