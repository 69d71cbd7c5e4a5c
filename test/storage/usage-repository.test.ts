/** Usage history in storage (Storage.usage), the same behaviour on SQLite and PostgreSQL. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ChangeRecorder } from '../../src/changes/change-recorder.js'
import { ManualClock } from '../../src/shared/clock.js'
import type { Storage } from '../../src/storage/storage.js'
import { HOUR_MS, MINUTE_MS, type UsageCounts, zeroCounts } from '../../src/usage/counts.js'
import { UsageRecorder } from '../../src/usage/recorder.js'
import { RETENTION_BATCH, UsageRetention } from '../../src/usage/retention.js'
import { UsageHistory } from '../../src/usage/usage-history.js'
import { createApiKey } from '../helpers/keys.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const T0 = Date.UTC(2030, 0, 1, 10, 0, 0)
const counts = (partial: Partial<UsageCounts>): UsageCounts => ({ ...zeroCounts(), ...partial })
const free = (storage: Storage, name: string) => createApiKey(storage.keys, { plan: 'free', name }, 'production', T0 - HOUR_MS)

for (const engine of STORE_ENGINES) {
  describe(`usage history on ${engine.name}`, () => {
    test('two instances (two recorders on one store) add up exactly, in minute and hour rows', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = new UsageRecorder(storage.usage, { flushMs: 600_000 })
      const b = new UsageRecorder(storage.usage, { flushMs: 600_000 })
      for (let i = 0; i < 5; i++) a.record('key_one', 'allowed', 200, T0 + i)
      for (let i = 0; i < 3; i++) b.record('key_one', 'rate_limited', 429, T0 + 30_000)
      b.record('key_one', 'key_banned', 429, T0 + MINUTE_MS)
      b.record('key_two', 'allowed', 500, T0 + HOUR_MS)
      await Promise.all([a.flush(), b.flush()])
      a.record('key_one', 'allowed', 404, T0 + 59_999)
      await a.flush()

      assert.deepEqual(await storage.usage.history(['key_one'], 'minute', T0, T0 + HOUR_MS), [
        { start: T0, counts: counts({ allowed: 6, rateLimited: 3, status2xx: 5, status4xx: 4 }) },
        { start: T0 + MINUTE_MS, counts: counts({ banned: 1, status4xx: 1 }) },
      ])
      assert.deepEqual(await storage.usage.history(['key_one', 'key_two'], 'hour', T0, T0 + 2 * HOUR_MS), [
        { start: T0, counts: counts({ allowed: 6, rateLimited: 3, banned: 1, status2xx: 5, status4xx: 5 }) },
        { start: T0 + HOUR_MS, counts: counts({ allowed: 1, status5xx: 1 }) },
      ])
      assert.deepEqual(
        await storage.usage.history(['key_one'], 'minute', T0 + MINUTE_MS, T0 + 2 * MINUTE_MS),
        [{ start: T0 + MINUTE_MS, counts: counts({ banned: 1, status4xx: 1 }) }],
        'from inclusive, to exclusive',
      )
      assert.deepEqual(await storage.usage.history([], 'minute', T0, T0 + HOUR_MS), [])
    })

    test('concurrent flushes of the same cells from many recorders never lose a count', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const recorders = Array.from({ length: 6 }, () => new UsageRecorder(storage.usage, { flushMs: 600_000 }))
      for (let round = 0; round < 3; round++) {
        for (const r of recorders) for (const id of ['k_a', 'k_b', 'k_c']) r.record(id, 'allowed', 200, T0 + round * MINUTE_MS)
        await Promise.all(recorders.map((r) => r.flush()))
      }
      assert.equal(
        recorders.reduce((n, r) => n + r.size, 0),
        0,
        'every flush succeeded',
      )
      const [hour] = await storage.usage.history(['k_a', 'k_b', 'k_c'], 'hour', T0, T0 + HOUR_MS)
      assert.equal(hour?.counts.allowed, 6 * 3 * 3)
    })

    test('retention deletes rows older than the cut-off in batches, newer rows stay', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const cells = Array.from({ length: 2500 }, (_, i) => ({
        keyId: `k${i % 50}`,
        minute: T0 + Math.floor(i / 50) * MINUTE_MS,
        counts: counts({ allowed: 1 }),
      }))
      await storage.usage.addUsage(cells)
      await storage.usage.addUsage([{ keyId: 'k0', minute: T0 + 2 * HOUR_MS, counts: counts({ allowed: 7 }) }])
      const cutoff = T0 + 2 * HOUR_MS
      assert.equal(await storage.usage.deleteBefore('minute', cutoff, RETENTION_BATCH), RETENTION_BATCH)
      const retention = new UsageRetention(storage.usage, {
        keep: { minute: HOUR_MS, hour: HOUR_MS },
        intervalMs: 600_000,
        clock: new ManualClock(cutoff + HOUR_MS),
      })
      // 1500 minute rows left in two batches; hour rows: k0..k49 at T0 (50), none at T0 + 1 h (only 2500 / 50 = 50 minutes).
      assert.equal(await retention.run(), 1500 + 50)
      assert.deepEqual(await storage.usage.history(['k0'], 'minute', T0, T0 + 3 * HOUR_MS), [
        { start: cutoff, counts: counts({ allowed: 7 }) },
      ])
      assert.deepEqual(await storage.usage.history(['k0'], 'hour', T0, T0 + 3 * HOUR_MS), [
        { start: cutoff, counts: counts({ allowed: 7 }) },
      ])
      assert.equal(await retention.run(), 0)
    })

    test('history: zero-filled buckets from..to, pending counts of this process merged in, chain scope', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const { record } = await free(storage, 'chain')
      const other = await free(storage, 'other')
      const recorder = new UsageRecorder(storage.usage, { flushMs: 600_000 })
      const history = new UsageHistory({
        usage: storage.usage,
        keys: storage.keys,
        recorder: new ChangeRecorder(storage.audit, new ManualClock(T0 + 5 * MINUTE_MS + 1)),
        clock: new ManualClock(T0 + 5 * MINUTE_MS + 1),
        pending: recorder,
      })
      recorder.record(record.id, 'allowed', 200, T0 + MINUTE_MS)
      recorder.record(other.record.id, 'allowed', 200, T0 + MINUTE_MS)
      await recorder.flush()
      recorder.record(record.id, 'rate_limited', 429, T0 + 3 * MINUTE_MS)
      const buckets = await history.history(record.id, { granularity: 'minute', scope: 'key', from: T0, to: T0 + 5 * MINUTE_MS })
      assert.deepEqual(
        buckets.map((b) => [(b.start - T0) / MINUTE_MS, b.counts.allowed, b.counts.rateLimited]),
        [
          [0, 0, 0],
          [1, 1, 0],
          [2, 0, 0],
          [3, 0, 1],
          [4, 0, 0],
        ],
      )
      const defaults = await history.history(record.id, { granularity: 'hour', scope: 'key' })
      assert.equal(defaults.length, 24)
      assert.equal(defaults.at(-1)?.start, T0)
      assert.deepEqual(defaults.at(-1)?.counts, counts({ allowed: 1, rateLimited: 1, status2xx: 1, status4xx: 1 }))
      assert.deepEqual(await storage.usage.quotaKeyIds(record.quotaId), [record.id])
      await assert.rejects(history.history('key_0000000000000000', { granularity: 'minute', scope: 'key' }), {
        name: 'Refusal',
        kind: 'not_found',
      })
    })

    test('top: by requests or rate limited over hour rows, keys with none of the measure left out, pending merged exactly', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const [k1, k2, k3] = await Promise.all(['one', 'two', 'three'].map((n) => free(storage, n)))
      const ids = [k1!.record.id, k2!.record.id, k3!.record.id]
      await storage.usage.addUsage([
        { keyId: ids[0]!, minute: T0, counts: counts({ allowed: 10, status2xx: 10 }) },
        { keyId: ids[1]!, minute: T0, counts: counts({ allowed: 4, rateLimited: 3, status2xx: 4, status4xx: 3 }) },
        { keyId: ids[2]!, minute: T0 - 2 * HOUR_MS, counts: counts({ allowed: 50 }) },
      ])
      const range = { from: T0 - HOUR_MS, to: T0 + HOUR_MS }
      const top = await storage.usage.top({ ...range, by: 'requests', limit: 10 })
      assert.deepEqual(
        top.map((k) => [k.keyId, k.name, k.plan, k.counts.allowed + k.counts.rateLimited]),
        [
          [ids[0], 'one', 'free', 10],
          [ids[1], 'two', 'free', 7],
        ],
      )
      assert.deepEqual(
        (await storage.usage.top({ ...range, by: 'rateLimited', limit: 10 })).map((k) => k.keyId),
        [ids[1]],
      )
      assert.deepEqual(
        (await storage.usage.top({ ...range, by: 'requests', limit: 1 })).map((k) => k.keyId),
        [ids[0]],
      )
      const withZeros = await storage.usage.top({ ...range, by: 'requests', limit: 1, keyIds: [ids[2]!] })
      assert.deepEqual(
        withZeros.map((k) => [k.keyId, k.counts]),
        [[ids[2], zeroCounts()]],
        'keyIds: every key asked for, zeros included',
      )

      const recorder = new UsageRecorder(storage.usage, { flushMs: 600_000 })
      for (let i = 0; i < 11; i++) recorder.record(ids[2]!, 'rate_limited', 429, T0 + 1)
      const history = new UsageHistory({
        usage: storage.usage,
        keys: storage.keys,
        recorder: new ChangeRecorder(storage.audit, new ManualClock(T0 + 1)),
        clock: new ManualClock(T0 + 1),
        pending: recorder,
      })
      const merged = await history.top({ ...range, by: 'requests', limit: 2 })
      assert.deepEqual(
        merged.keys.map((k) => [k.keyId, k.counts.allowed + k.counts.rateLimited]),
        [
          [ids[2], 11],
          [ids[0], 10],
        ],
      )
    })

    test('top and history with more pending keys than a statement takes parameters (SQLite 32,766, PostgreSQL 65,535)', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const [busy, quiet] = await Promise.all([free(storage, 'busy'), free(storage, 'quiet')])
      await storage.usage.addUsage([{ keyId: quiet!.record.id, minute: T0, counts: counts({ allowed: 3, status2xx: 3 }) }])
      const recorder = new UsageRecorder(storage.usage, { flushMs: 600_000 })
      // 70,000 keys with unflushed counts (keys deleted since, or of another store: not listed), and two real ones.
      for (let i = 0; i < 70_000; i++) recorder.record(`key_gone${String(i).padStart(12, '0')}`, 'allowed', 200, T0)
      for (let i = 0; i < 5; i++) recorder.record(busy!.record.id, 'allowed', 200, T0)
      recorder.record(quiet!.record.id, 'allowed', 200, T0)
      const history = new UsageHistory({
        usage: storage.usage,
        keys: storage.keys,
        recorder: new ChangeRecorder(storage.audit, new ManualClock(T0 + 1)),
        clock: new ManualClock(T0 + 1),
        pending: recorder,
      })
      const top = await history.top({ from: T0 - HOUR_MS, to: T0 + HOUR_MS, by: 'requests', limit: 5 })
      assert.deepEqual(
        top.keys.map((k) => [k.name, k.counts.allowed]),
        [
          ['busy', 5],
          ['quiet', 4],
        ],
      )
      const ids = [...recorder.pendingTotals(T0, T0 + HOUR_MS).keys()]
      assert.ok(ids.length > 65_535)
      assert.deepEqual(await storage.usage.history(ids, 'hour', T0 - HOUR_MS, T0 + HOUR_MS), [
        { start: T0, counts: counts({ allowed: 3, status2xx: 3 }) },
      ])
    })
  })
}
