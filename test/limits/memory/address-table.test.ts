/**
 * The in-memory limiter's bound on keyless addresses (LIMITER_MAX_ADDRESSES): the table never
 * grows past it, an address is never let through more than its plan allows however many others
 * there are, keys stay exact, and the state file is bounded and reloads. The same in Redis:
 * test/limits/redis-address-table.test.ts.
 */
import assert from 'node:assert/strict'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import fc from 'fast-check'
import { OVERFLOW_BUCKETS, overflowBucket } from '../../../src/limits/address-identities.js'
import type { BanPolicy, LimitDecision } from '../../../src/limits/limiter.js'
import { MemoryLimiter } from '../../../src/limits/memory/memory-limiter.js'
import { LimiterStateFile, STATE_FILE_FORMAT, STATE_FILE_VERSION } from '../../../src/limits/memory/state-file.js'
import { consumeOne, DAY_MS, foldState, freshState, type IdentityState, MINUTE_MS, peekState } from '../../../src/limits/policy.js'
import { ManualClock } from '../../../src/shared/clock.js'
import type { Quota } from '../../../src/shared/plans.js'

const MIDDAY = Date.UTC(2026, 10, 21, 12, 0, 30)
const POLICY: BanPolicy = { threshold: 2, baseSeconds: 30, maxSeconds: 120 }
const QUOTA: Quota = { perMinute: 3, perDay: 8 }
const KEY_QUOTA: Quota = { perMinute: 5, perDay: 20 }

const address = (i: number) => `a:198.51.${i >> 8}.${i & 255}`

function limiterWith(maxAddresses: number, at = MIDDAY, options: { stateFile?: LimiterStateFile } = {}) {
  const clock = new ManualClock(at)
  return { clock, limiter: new MemoryLimiter(clock, POLICY, { maxAddresses, ...options }) }
}

/** Addresses that share no overflow counter with each other (nor with `others`). */
function apart(count: number, from = 0, others: string[] = []): string[] {
  const taken = new Set(others.map(overflowBucket))
  const out: string[] = []
  for (let i = from; out.length < count; i++) {
    const b = overflowBucket(address(i))
    if (taken.has(b)) continue
    taken.add(b)
    out.push(address(i))
  }
  return out
}

describe('MemoryLimiter: the keyless address table', () => {
  test('never holds more than maxAddresses addresses; the rest share at most OVERFLOW_BUCKETS counters', async () => {
    const { clock, limiter } = limiterWith(8)
    for (let i = 0; i < 5000; i++) {
      limiter.consumeSync(address(i), QUOTA)
      assert.ok(limiter.addressCount <= 8, `after ${i + 1} addresses: ${limiter.addressCount}`)
    }
    limiter.consumeSync('k:one', KEY_QUOTA)
    assert.equal(limiter.addressCount, 8)
    assert.ok(limiter.size <= 8 + OVERFLOW_BUCKETS + 1, `${limiter.size} counters`)
    // The next day the old counters are swept and the table takes new addresses again.
    clock.advance(DAY_MS)
    assert.ok(limiter.sweep() > 0)
    assert.equal(limiter.addressCount, 0)
    limiter.consumeSync(address(9000), QUOTA)
    assert.equal(limiter.addressCount, 1)
    await limiter.close()
  })

  test('an address in the table is exact; one past the bound shares its overflow counter and is refused sooner', async () => {
    const { limiter } = limiterWith(1)
    const [first, second, third] = apart(3)
    const own = Array.from({ length: 4 }, () => limiter.consumeSync(first!, QUOTA).allowed)
    assert.deepEqual(own, [true, true, true, false], 'exactly its 3 a minute')
    // `third` shares `second`'s counter only if they hash alike: make them do so.
    const sharing = [second!, ...Array.from({ length: 4000 }, (_, i) => address(10_000 + i))].filter(
      (a) => overflowBucket(a) === overflowBucket(second!),
    )
    assert.ok(sharing.length >= 2, 'two addresses with one overflow counter')
    assert.equal(limiter.consumeSync(sharing[0]!, QUOTA).minute.remaining, 2)
    assert.equal(limiter.consumeSync(sharing[1]!, QUOTA).minute.remaining, 1, 'one counter for both')
    assert.equal(limiter.consumeSync(third!, QUOTA).minute.remaining, 2, 'another overflow counter is apart')
    await limiter.close()
  })

  test('an address that finds room after being counted in an overflow counter starts from that counter', async () => {
    const { clock, limiter } = limiterWith(1, Date.UTC(2026, 10, 21, 23, 59, 50))
    const [old, late] = apart(2)
    limiter.consumeSync(old!, QUOTA) // yesterday's entry fills the table until the sweep
    clock.set(Date.UTC(2026, 10, 22, 0, 0, 10))
    for (let i = 0; i < 3; i++) assert.equal(limiter.consumeSync(late!, QUOTA).allowed, true)
    assert.equal(limiter.addressCount, 1, 'counted in its overflow counter')
    assert.equal(limiter.sweep(), 1)
    const moved = limiter.consumeSync(late!, QUOTA)
    assert.equal(limiter.addressCount, 1, 'now in the table')
    assert.equal(moved.allowed, false, 'the 3 it was let through in the shared counter still count')
    assert.equal(moved.day.remaining, QUOTA.perDay - 3)
    assert.equal((await limiter.peek(late!, QUOTA)).minute.used, 3)
    await limiter.close()
  })

  test('bans hold in the overflow counters too', async () => {
    const { limiter } = limiterWith(0)
    const decisions: LimitDecision[] = []
    for (let i = 0; i < 6; i++) decisions.push(limiter.consumeSync(address(1), QUOTA))
    assert.deepEqual(
      decisions.map((d) => d.reason ?? 'allowed'),
      ['allowed', 'allowed', 'allowed', 'rate_limited', 'key_banned', 'key_banned'],
    )
    assert.equal(limiter.addressCount, 0)
    const peeked = await limiter.peek(address(1), QUOTA)
    assert.equal(peeked.ban.active, true)
    await limiter.close()
  })

  test('keys stay exact while the table and the overflow counters are full and banned', async () => {
    const { limiter } = limiterWith(4)
    for (let i = 0; i < 3000; i++) for (let j = 0; j < 5; j++) limiter.consumeSync(address(i), QUOTA)
    const keyState = freshState()
    for (let i = 0; i < 12; i++) {
      const now = MIDDAY
      assert.deepEqual(limiter.consumeSync('k:exact', KEY_QUOTA), consumeOne(keyState, now, KEY_QUOTA, POLICY), `request ${i}`)
    }
    assert.equal(limiter.addressCount, 4)
    await limiter.close()
  })

  test('property: whatever the addresses and the time, no address passes more than its plan; keys decide as alone; the bound holds', () => {
    const step = fc.oneof(
      { weight: 12, arbitrary: fc.record({ kind: fc.constant('address' as const), who: fc.nat(11) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('key' as const), who: fc.nat(2) }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.nat(20_000) }) },
      // Hours: the next day, bans and ban levels running out, so the sweep frees room in the table.
      {
        weight: 1,
        arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 3_600_000, max: 26 * 3_600_000 }) }),
      },
      { weight: 2, arbitrary: fc.constant({ kind: 'sweep' as const }) },
    )
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.array(step, { minLength: 50, maxLength: 300, size: 'max' }), (maxAddresses, steps) => {
        const { clock, limiter } = limiterWith(maxAddresses, Date.UTC(2026, 10, 21, 22, 0, 0))
        const passed = new Map<string, number>() // `${who}|minute|<start>` and `${who}|day|<start>` -> requests let through
        const keys = new Map<number, IdentityState>()
        const count = (k: string) => passed.set(k, (passed.get(k) ?? 0) + 1).get(k)!
        try {
          for (const s of steps) {
            if (s.kind === 'advance') clock.advance(s.ms)
            else if (s.kind === 'sweep') limiter.sweep()
            else if (s.kind === 'key') {
              const state = keys.get(s.who) ?? keys.set(s.who, freshState()).get(s.who)!
              assert.deepEqual(limiter.consumeSync(`k:${s.who}`, KEY_QUOTA), consumeOne(state, clock.now(), KEY_QUOTA, POLICY))
            } else if (limiter.consumeSync(address(s.who), QUOTA).allowed) {
              const now = clock.now()
              assert.ok(count(`${s.who}|minute|${now - (now % MINUTE_MS)}`) <= QUOTA.perMinute, `${address(s.who)} over its minute`)
              assert.ok(count(`${s.who}|day|${now - (now % DAY_MS)}`) <= QUOTA.perDay, `${address(s.who)} over its day`)
            }
            assert.ok(limiter.addressCount <= maxAddresses)
            assert.ok(limiter.size <= maxAddresses + OVERFLOW_BUCKETS + keys.size)
          }
        } finally {
          void limiter.close()
        }
      }),
      { numRuns: 500 },
    )
  })
})

test('property: a folded counter holds at least what either counter held, at any later time', () => {
  const start = Date.UTC(2026, 10, 21)
  const at = fc.integer({ min: start, max: start + 2 * DAY_MS })
  const state = fc.record({
    minuteStart: at.map((t) => t - (t % MINUTE_MS)),
    minuteCount: fc.nat(5),
    minuteRejected: fc.nat(3),
    dayStart: at.map((t) => t - (t % DAY_MS)),
    dayCount: fc.nat(10),
    banUntil: fc.oneof(fc.constant(0), at),
    banLevel: fc.nat(4),
    banLevelExpiresAt: fc.oneof(fc.constant(0), at),
  })
  fc.assert(
    fc.property(state, state, fc.integer({ min: 0, max: 3 * DAY_MS }), (a, b, later) => {
      // Consistent states: a minute inside its day.
      fc.pre(a.minuteStart >= a.dayStart && b.minuteStart >= b.dayStart)
      const now = Math.max(a.minuteStart, b.minuteStart) + later
      const folded = { ...a }
      foldState(folded, b)
      const [f, pa, pb] = [folded, a, b].map((s) => peekState(s, now, QUOTA))
      assert.ok(f!.minute.used >= Math.max(pa!.minute.used, pb!.minute.used))
      assert.ok(f!.day.used >= Math.max(pa!.day.used, pb!.day.used))
      assert.ok(f!.ban.level >= Math.max(pa!.ban.level, pb!.ban.level))
      assert.ok(f!.ban.active || (!pa!.ban.active && !pb!.ban.active))
    }),
  )
})

describe('MemoryLimiter: the state file under the address bound', () => {
  async function tempFile(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'animal-store-address-table-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    return join(dir, 'limits.json')
  }
  const quietLog = { warn: () => {}, info: () => {} }

  test('holds at most the bound of addresses and the overflow counters, and reloads them', async (t) => {
    const path = await tempFile(t)
    const first = limiterWith(8, MIDDAY, { stateFile: new LimiterStateFile(path, quietLog) })
    for (let i = 0; i < 5000; i++) first.limiter.consumeSync(address(i), QUOTA)
    // The first address (in the table) and one past the bound spend their minute.
    const late = address(4999)
    for (let i = 0; i < 3; i++) {
      first.limiter.consumeSync(address(0), QUOTA)
      first.limiter.consumeSync(late, QUOTA)
    }
    first.limiter.consumeSync('k:kept', KEY_QUOTA)
    await first.limiter.close()

    const document = JSON.parse(readFileSync(path, 'utf8')) as { states: Array<[string, ...number[]]> }
    const identities = document.states.map((s) => s[0])
    assert.equal(identities.filter((i) => i.startsWith('a:')).length, 8)
    assert.ok(identities.length <= 8 + OVERFLOW_BUCKETS + 1, `${identities.length} entries`)
    // Each entry is at most ~110 bytes (the longest identity, nine numbers of up to 13 digits).
    assert.ok(statSync(path).size <= (8 + OVERFLOW_BUCKETS + 1) * 110 + 200, `${statSync(path).size} bytes`)

    const second = limiterWith(8, MIDDAY + 1000, { stateFile: new LimiterStateFile(path, quietLog) })
    t.after(() => second.limiter.close())
    assert.equal(second.limiter.addressCount, 8)
    assert.equal(second.limiter.consumeSync(address(0), QUOTA).allowed, false, 'the table address kept its count')
    assert.equal(second.limiter.consumeSync(late, QUOTA).allowed, false, 'the overflow counter kept its count')
    assert.equal(second.limiter.consumeSync('k:kept', KEY_QUOTA).day.remaining, KEY_QUOTA.perDay - 2)
  })

  test('a file with more addresses than the bound (an earlier, larger LIMITER_MAX_ADDRESSES) is folded into the overflow counters', async (t) => {
    const path = await tempFile(t)
    const minute = MIDDAY - (MIDDAY % MINUTE_MS)
    const day = MIDDAY - (MIDDAY % DAY_MS)
    // 100 addresses: each spent its minute; number 50 is banned for another minute at level 2.
    const states = Array.from({ length: 100 }, (_, i) => [
      address(i),
      minute,
      3,
      0,
      day,
      3,
      i === 50 ? MIDDAY + MINUTE_MS : 0,
      i === 50 ? 2 : 0,
      i === 50 ? MIDDAY + MINUTE_MS + DAY_MS : 0,
    ])
    writeFileSync(path, JSON.stringify({ format: STATE_FILE_FORMAT, version: STATE_FILE_VERSION, savedAt: MIDDAY, states }))

    const { limiter } = limiterWith(10, MIDDAY + 1000, { stateFile: new LimiterStateFile(path, quietLog) })
    t.after(() => limiter.close())
    assert.equal(limiter.addressCount, 10)
    assert.ok(limiter.size <= 10 + 90)
    for (let i = 0; i < 100; i++) {
      const d = limiter.consumeSync(address(i), QUOTA)
      assert.equal(d.allowed, false, `${address(i)} gets no request back`)
    }
    const banned = await limiter.peek(address(50), QUOTA)
    assert.deepEqual([banned.ban.active, banned.ban.level], [true, 2], 'the ban survives the fold')
    assert.equal(await limiter.writeState(), true)
    const rewritten = JSON.parse(readFileSync(path, 'utf8')) as { states: Array<[string]> }
    assert.equal(rewritten.states.filter((s) => s[0].startsWith('a:')).length, 10, 'the next write is within the bound')
  })
})
