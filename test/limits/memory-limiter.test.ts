import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { BanPolicy, LimitDecision } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { DAY_MS, MINUTE_MS } from '../../src/limits/policy.js'
import { ManualClock } from '../../src/shared/clock.js'
import type { Quota } from '../../src/shared/plans.js'

// The policy details that need time to move; the behaviour shared with Redis is in the contract suite.
const MIDDAY = Date.UTC(2026, 10, 21, 12, 0, 30)

function setup(policy: BanPolicy = { threshold: 3, baseSeconds: 60, maxSeconds: 240 }, at = MIDDAY) {
  const clock = new ManualClock(at)
  const limiter = new MemoryLimiter(clock, policy)
  return { clock, limiter }
}

/** Sends until a request starts a ban; returns that request's decision. */
function provokeBan(limiter: MemoryLimiter, identity: string, quota: Quota): LimitDecision {
  for (let i = 0; i < 1000; i++) {
    const d = limiter.consumeSync(identity, quota)
    if (d.banStarted) return d
  }
  throw new Error('no ban after 1000 requests')
}

describe('MemoryLimiter: windows on a moved clock', () => {
  test('the minute window resets exactly at the minute boundary', async () => {
    const { clock, limiter } = setup(undefined, Date.UTC(2026, 10, 21, 12, 0, 59, 999))
    const quota = { perMinute: 2, perDay: 100 }
    limiter.consumeSync('k:a', quota)
    limiter.consumeSync('k:a', quota)
    const refused = limiter.consumeSync('k:a', quota)
    assert.equal(refused.allowed, false)
    assert.equal(refused.reason, 'rate_limited')
    assert.equal(refused.retryAfter, 1)
    assert.equal(refused.minute.resetAt, Date.UTC(2026, 10, 21, 12, 1) / 1000)
    clock.advance(1)
    const next = limiter.consumeSync('k:a', quota)
    assert.equal(next.allowed, true)
    assert.equal(next.minute.remaining, 1)
    assert.equal(next.minute.resetAt, Date.UTC(2026, 10, 21, 12, 2) / 1000)
    assert.equal(next.day.remaining, 97)
    await limiter.close()
  })

  test('the day window resets exactly at UTC midnight', async () => {
    const { clock, limiter } = setup(undefined, Date.UTC(2026, 10, 21, 23, 59, 30))
    const quota = { perMinute: 100, perDay: 2 }
    limiter.consumeSync('k:a', quota)
    limiter.consumeSync('k:a', quota)
    const refused = limiter.consumeSync('k:a', quota)
    assert.equal(refused.allowed, false)
    assert.equal(refused.retryAfter, 30)
    assert.equal(refused.day.resetAt, Date.UTC(2026, 10, 22) / 1000)
    clock.set(Date.UTC(2026, 10, 22) - 1)
    assert.equal(limiter.consumeSync('k:a', quota).allowed, false)
    clock.set(Date.UTC(2026, 10, 22))
    const next = limiter.consumeSync('k:a', quota)
    assert.equal(next.allowed, true)
    assert.equal(next.day.remaining, 1)
    assert.equal(next.day.resetAt, Date.UTC(2026, 10, 23) / 1000)
    await limiter.close()
  })

  test('a request refused by the minute window leaves the day window for later minutes', async () => {
    const { clock, limiter } = setup({ threshold: 100, baseSeconds: 60, maxSeconds: 240 })
    const quota = { perMinute: 3, perDay: 5 }
    for (let i = 0; i < 10; i++) limiter.consumeSync('k:a', quota)
    clock.advance(MINUTE_MS)
    const results = Array.from({ length: 4 }, () => limiter.consumeSync('k:a', quota))
    assert.deepEqual(
      results.map((d) => d.allowed),
      [true, true, false, false],
    )
    assert.equal(results[2]?.day.remaining, 0)
    assert.equal(results[2]?.minute.remaining, 1, 'the day-refused request did not count in the minute')
    await limiter.close()
  })
})

describe('MemoryLimiter: bans on a moved clock', () => {
  const quota = { perMinute: 1, perDay: 10_000 }

  test('bans escalate 60 -> 120 -> 240 and stay capped at the maximum', async () => {
    const { clock, limiter } = setup()
    const lengths: number[] = []
    for (let i = 0; i < 4; i++) {
      const d = provokeBan(limiter, 'k:a', quota)
      assert.equal(d.reason, 'key_banned')
      lengths.push(d.retryAfter)
      clock.advance(d.retryAfter * 1000)
    }
    assert.deepEqual(lengths, [60, 120, 240, 240])
    await limiter.close()
  })

  test('a ban holds to the millisecond, counts down, and starts only once', async () => {
    const { clock, limiter } = setup()
    const start = provokeBan(limiter, 'k:a', quota)
    assert.equal(start.retryAfter, 60)
    clock.advance(30_500)
    const during = limiter.consumeSync('k:a', quota)
    assert.equal(during.reason, 'key_banned')
    assert.equal(during.retryAfter, 30)
    assert.equal(during.banStarted, undefined)
    clock.advance(29_499)
    assert.equal(limiter.consumeSync('k:a', quota).retryAfter, 1)
    clock.advance(1)
    assert.notEqual(limiter.consumeSync('k:a', quota).reason, 'key_banned')
    await limiter.close()
  })

  test('rejections count within one minute window only', async () => {
    const { clock, limiter } = setup()
    const dayExhausted = { perMinute: 100, perDay: 1 }
    limiter.consumeSync('k:a', dayExhausted)
    limiter.consumeSync('k:a', dayExhausted)
    limiter.consumeSync('k:a', dayExhausted)
    clock.advance(MINUTE_MS)
    assert.equal(limiter.consumeSync('k:a', dayExhausted).reason, 'rate_limited')
    assert.equal(limiter.consumeSync('k:a', dayExhausted).reason, 'rate_limited')
    assert.equal(limiter.consumeSync('k:a', dayExhausted).banStarted, true)
    await limiter.close()
  })

  test('threshold 0 means the per-minute limit, at least 10', async () => {
    const { limiter } = setup({ threshold: 0, baseSeconds: 60, maxSeconds: 240 })
    const rejectionsBeforeBan = (identity: string, q: Quota) => {
      let n = 0
      for (;;) {
        const d = limiter.consumeSync(identity, q)
        if (d.banStarted) return n + 1
        if (!d.allowed) n++
      }
    }
    assert.equal(rejectionsBeforeBan('k:small', { perMinute: 3, perDay: 1000 }), 10)
    assert.equal(rejectionsBeforeBan('k:large', { perMinute: 25, perDay: 1000 }), 25)
    await limiter.close()
  })

  test('the ban level decays 24 hours after the last ban ended', async () => {
    const { clock, limiter } = setup()
    for (const [identity, wait, expected] of [
      ['k:kept', DAY_MS - 1, 120],
      ['k:decayed', DAY_MS, 60],
    ] as const) {
      clock.set(MIDDAY)
      const first = provokeBan(limiter, identity, quota)
      assert.equal(first.retryAfter, 60)
      clock.advance(first.retryAfter * 1000 + wait)
      assert.equal(provokeBan(limiter, identity, quota).retryAfter, expected, identity)
    }
    await limiter.close()
  })
})

describe('MemoryLimiter: sweep', () => {
  test('forgets identities once their day window, ban and ban level are all over', async () => {
    const { clock, limiter } = setup()
    const quota = { perMinute: 1, perDay: 10_000 }
    limiter.consumeSync('a:192.0.2.1', quota)
    limiter.consumeSync('k:plain', quota)
    const ban = provokeBan(limiter, 'k:banned', quota)
    assert.equal(limiter.sweep(), 0, 'nothing is stale within the day')
    assert.equal(limiter.size, 3)

    clock.set(Date.UTC(2026, 10, 22))
    assert.equal(limiter.sweep(), 2, 'the next UTC day frees the identities without a ban level')
    assert.equal(limiter.size, 1)

    const levelExpires = MIDDAY + ban.retryAfter * 1000 + DAY_MS
    clock.set(levelExpires - 1)
    assert.equal(limiter.sweep(), 0, 'a ban level still escalates the next ban')
    clock.set(levelExpires)
    assert.equal(limiter.sweep(), 1)
    assert.equal(limiter.size, 0)
    await limiter.close()
  })
})
