import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/shared/clock.js'
import { HOUR_MS, MINUTE_MS, type UsageCounts, zeroCounts } from '../../src/usage/counts.js'
import { UsageRecorder } from '../../src/usage/recorder.js'
import type { UsageCell } from '../../src/usage/repository.js'

const T0 = Date.UTC(2030, 0, 1, 10, 0, 0)
const counts = (partial: Partial<UsageCounts>): UsageCounts => ({ ...zeroCounts(), ...partial })

/** A store that keeps every batch it is given, or refuses while `fail` is set. */
function fakeStore() {
  const batches: UsageCell[][] = []
  const store = {
    fail: false,
    batches,
    addUsage: async (cells: readonly UsageCell[]) => {
      if (store.fail) throw new Error('storage down')
      batches.push([...cells])
    },
  }
  return store
}

const sortCells = (cells: UsageCell[]) => [...cells].sort((a, b) => a.minute - b.minute || a.keyId.localeCompare(b.keyId))

test('counts per key and per UTC minute: the last millisecond of a minute and the first of the next are two cells', async () => {
  const store = fakeStore()
  const recorder = new UsageRecorder(store, { flushMs: 600_000 })
  const clock = new ManualClock(T0 + MINUTE_MS - 1)
  recorder.record('key_a', 'allowed', 200, clock.now())
  recorder.record('key_a', 'rate_limited', 429, clock.now())
  clock.advance(1)
  recorder.record('key_a', 'key_banned', 429, clock.now())
  recorder.record('key_b', 'allowed', 503, clock.now())
  recorder.record('key_b', 'allowed', 304, clock.now())
  assert.equal(recorder.size, 3)
  await recorder.flush()
  assert.deepEqual(sortCells(store.batches[0]!), [
    { keyId: 'key_a', minute: T0, counts: counts({ allowed: 1, rateLimited: 1, status2xx: 1, status4xx: 1 }) },
    { keyId: 'key_a', minute: T0 + MINUTE_MS, counts: counts({ banned: 1, status4xx: 1 }) },
    { keyId: 'key_b', minute: T0 + MINUTE_MS, counts: counts({ allowed: 2, status5xx: 1 }) },
  ])
  assert.equal(recorder.size, 0, 'a stored batch frees its cells')
  await recorder.flush()
  assert.equal(store.batches.length, 1, 'nothing pending: no write')
})

test('a failed flush keeps its counts, added to what arrived meanwhile, for the next flush', async () => {
  const store = fakeStore()
  const errors: unknown[] = []
  const recorder = new UsageRecorder(store, { flushMs: 600_000, onError: (e) => errors.push(e) })
  recorder.record('key_a', 'allowed', 200, T0)
  recorder.record('key_a', 'allowed', 200, T0 + 1)
  store.fail = true
  await recorder.flush()
  assert.equal(errors.length, 1)
  assert.deepEqual(recorder.pendingBuckets(['key_a'], MINUTE_MS, T0, T0 + MINUTE_MS).get(T0), counts({ allowed: 2, status2xx: 2 }))
  recorder.record('key_a', 'rate_limited', 429, T0 + 2)
  recorder.record('key_c', 'allowed', 200, T0 + 3)
  assert.equal(recorder.size, 2, 'the merged cell of key_a is one cell')
  store.fail = false
  await recorder.stop()
  assert.deepEqual(sortCells(store.batches[0]!), [
    { keyId: 'key_a', minute: T0, counts: counts({ allowed: 2, rateLimited: 1, status2xx: 2, status4xx: 1 }) },
    { keyId: 'key_c', minute: T0, counts: counts({ allowed: 1, status2xx: 1 }) },
  ])
  assert.equal(store.batches.length, 1)
})

test('counts recorded while a batch is being written are pending, and written by the next flush', async () => {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const batches: UsageCell[][] = []
  const recorder = new UsageRecorder(
    {
      addUsage: async (cells) => {
        batches.push([...cells])
        if (batches.length === 1) await gate
      },
    },
    { flushMs: 600_000 },
  )
  recorder.record('key_a', 'allowed', 200, T0)
  const first = recorder.flush()
  await new Promise((r) => setImmediate(r))
  recorder.record('key_a', 'allowed', 200, T0)
  assert.deepEqual(recorder.pendingBuckets(['key_a'], HOUR_MS, T0, T0 + HOUR_MS).get(T0), counts({ allowed: 2, status2xx: 2 }))
  release()
  await first
  await recorder.flush()
  assert.deepEqual(
    batches.map((b) => b.map((c) => c.counts.allowed)),
    [[1], [1]],
  )
})

test('memory is bounded: past maxCells a request needing a new cell is dropped and counted, existing cells still count', async () => {
  const store = fakeStore()
  store.fail = true
  let told = 0
  const recorder = new UsageRecorder(store, { flushMs: 600_000, maxCells: 3, onDropped: () => told++ })
  for (const id of ['k1', 'k2', 'k3', 'k4']) recorder.record(id, 'allowed', 200, T0)
  assert.equal(recorder.size, 3)
  assert.equal(recorder.dropped, 1)
  assert.equal(told, 1, 'each drop is told (the metric animal_store_usage_dropped_total)')
  await recorder.flush() // fails: the cells stay, still within the bound
  recorder.record('k1', 'allowed', 200, T0)
  recorder.record('k1', 'allowed', 200, T0 + MINUTE_MS) // a new minute needs a new cell
  assert.equal(recorder.size, 3)
  assert.equal(recorder.dropped, 2)
  assert.equal(recorder.pendingTotals(T0, T0 + HOUR_MS).get('k1')?.allowed, 2)
  store.fail = false
  await recorder.flush()
  assert.equal(recorder.size, 0)
  recorder.record('k4', 'allowed', 200, T0 + MINUTE_MS)
  assert.equal(recorder.size, 1, 'room again once stored')
})

test('pending buckets: summed over the keys asked for, per bucket size, within [from, to)', () => {
  const recorder = new UsageRecorder(fakeStore(), { flushMs: 600_000 })
  recorder.record('a', 'allowed', 200, T0)
  recorder.record('b', 'allowed', 200, T0 + MINUTE_MS)
  recorder.record('c', 'allowed', 200, T0 + MINUTE_MS)
  recorder.record('a', 'allowed', 200, T0 + HOUR_MS)
  const hours = recorder.pendingBuckets(['a', 'b'], HOUR_MS, T0, T0 + HOUR_MS)
  assert.deepEqual([...hours], [[T0, counts({ allowed: 2, status2xx: 2 })]])
  const minutes = recorder.pendingBuckets(['a', 'b'], MINUTE_MS, T0, T0 + 2 * HOUR_MS)
  assert.deepEqual(
    [...minutes].map(([start, c]) => [start - T0, c.allowed]),
    [
      [0, 1],
      [MINUTE_MS, 1],
      [HOUR_MS, 1],
    ],
  )
})
