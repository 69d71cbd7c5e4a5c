/**
 * The events of the limiter's answers (keys/limit-events.ts), written after the answer: a key's
 * quota passing 80% and 100% of its day window, once per window and threshold however many
 * requests pass it at once and however many instances see it (the store's once-key), on SQLite and
 * PostgreSQL; a ban once; a failing write never fails the request.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ChangeRecorder } from '../../src/changes/change-recorder.js'
import { LimitEvents } from '../../src/keys/limit-events.js'
import type { LimitDecision } from '../../src/limits/limiter.js'
import { ManualClock } from '../../src/shared/clock.js'
import { bearer, openTestApp, TEST_NOW } from '../helpers/app.js'
import { createApiKey } from '../helpers/keys.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const DAY_START = Math.floor(TEST_NOW / 86_400_000) * 86_400
const decision = (used: number, extra: Partial<LimitDecision> = {}): LimitDecision => ({
  allowed: true,
  now: TEST_NOW,
  minute: { limit: 1000, remaining: 1000 - used, resetAt: DAY_START + 60 },
  day: { limit: 10, remaining: 10 - used, resetAt: DAY_START + 86_400 },
  retryAfter: 0,
  ...extra,
})

for (const engine of STORE_ENGINES) {
  describe(`usage thresholds and bans on ${engine.name}`, () => {
    test('concurrent requests past 80% and 100% of the day: one key.usage_threshold each, the next day again', async (t) => {
      const clock = new ManualClock(TEST_NOW)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const app = await openTestApp({ storage, clock })
      t.after(() => app.close())
      const key = bearer(await app.key({ plan: 'enterprise', perMinute: 1000, perDay: 10 }))
      const burst = async (n: number) =>
        (await Promise.all(Array.from({ length: n }, () => app.app.inject({ url: '/v1/pets', headers: key })))).map((r) => r.statusCode)
      const statuses = await burst(14)
      assert.equal(statuses.filter((s) => s === 200).length, 10)
      assert.equal(statuses.filter((s) => s === 429).length, 4)
      await app.domain.limitEvents.settled()
      const thresholds = async () =>
        (await storage.events.list({ limit: 100, types: ['key.usage_threshold'] })).events.map((e) => JSON.parse(e.data))
      // Written by two of the burst's requests at once: logged in the order of their transactions.
      const first = (await thresholds()).sort((a, b) => a.threshold - b.threshold)
      assert.deepEqual(
        first.map((d) => [d.threshold, d.limit, d.window]),
        [
          [80, 10, 'day'],
          [100, 10, 'day'],
        ],
      )
      assert.equal(first[0].windowStart, new Date(DAY_START * 1000).toISOString())
      clock.advance(86_400_000)
      await burst(9)
      await app.domain.limitEvents.settled()
      const nextWindow = new Date((DAY_START + 86_400) * 1000).toISOString()
      assert.deepEqual(
        (await thresholds()).map((d) => [d.threshold, d.windowStart === nextWindow]).sort(),
        [
          [100, false],
          [80, false],
          [80, true],
        ],
        'the next window: its own 80%',
      )
    })

    test('several instances that see one crossing and one ban write one event each', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const { record } = await createApiKey(storage.keys, { plan: 'enterprise', name: 'k', perMinute: 1000, perDay: 10 }, 'production')
      const instances = [1, 2, 3].map(() => new LimitEvents(new ChangeRecorder(storage.audit, new ManualClock(TEST_NOW))))
      const identity = `k:${record.quotaId}`
      for (const i of instances) i.observe({ identity, decision: decision(8), key: record })
      for (const i of instances) i.observe({ identity, decision: decision(9), key: record })
      const ban = decision(10, { allowed: false, reason: 'key_banned', retryAfter: 60, banStarted: true })
      for (const i of instances) i.observe({ identity, decision: ban, key: record })
      await Promise.all(instances.map((i) => i.settled()))
      const events = (await storage.events.list({ limit: 100 })).events
      const told = events.map((e) => (e.type === 'key.banned' ? 'ban' : `${JSON.parse(e.data).threshold}%`))
      // One each, whichever instance wrote it. Their order in the log is that of the writing
      // transactions (on PostgreSQL their xids), and the instances write at once: an instance's 80%
      // may be logged after another's 100%. The 100% and the ban that found the window spent are one
      // change, in that order.
      assert.deepEqual([...told].sort(), ['100%', '80%', 'ban'])
      assert.ok(told.indexOf('100%') < told.indexOf('ban'), told.join(', '))
      assert.deepEqual(
        events.map((e) => [e.keyId, e.keyChainId]),
        events.map(() => [record.id, record.quotaId]),
      )
      const banned = events.find((e) => e.type === 'key.banned')!
      assert.equal(JSON.parse(banned.data).until, new Date(TEST_NOW + 60_000).toISOString())
    })
  })
}

test("an address's ban: key.banned with the address, no key, no owner; no threshold without a key", async (t) => {
  const storage = await STORE_ENGINES[0]!.open(t)
  const events = new LimitEvents(new ChangeRecorder(storage!.audit, new ManualClock(TEST_NOW)))
  const ban = decision(10, { allowed: false, reason: 'key_banned', retryAfter: 30, banStarted: true })
  events.observe({ identity: 'a:203.0.113.7', decision: ban })
  await events.settled()
  const [event, ...rest] = (await storage!.events.list({ limit: 10 })).events
  assert.deepEqual(rest, [])
  assert.deepEqual([event?.type, event?.customerId, event?.keyChainId, event?.keyId], ['key.banned', null, null, null])
  assert.deepEqual(JSON.parse(event!.data), {
    quotaId: null,
    customerId: null,
    keyId: null,
    address: '203.0.113.7',
    until: new Date(TEST_NOW + 30_000).toISOString(),
  })
})

test('a write that fails is told to onError, never thrown', async () => {
  const errors: unknown[] = []
  const events = new LimitEvents({ record: () => Promise.reject(new Error('disk on fire')) }, (e) => errors.push(e))
  const key = { id: 'key_a', quotaId: 'key_a', customerId: null } as never
  events.observe({ identity: 'k:key_a', decision: decision(10), key })
  await events.settled()
  assert.equal(errors.length, 1)
})
