/**
 * /readyz is public and not rate-limited, so its dependency checks are cached for
 * READINESS_MAX_AGE_MS and run one at a time (issue 28, item 3d): any number of probes, on either
 * listener, costs at most one store query and one limiter PING per interval, and a failure still
 * shows within that interval.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { READINESS_MAX_AGE_MS } from '../../src/ops/readiness.js'
import { buildTestApp, memoryStorage } from '../helpers/app.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Counts pings of the store and the limiter; the store's answers after `delayMs` and fails while `down` is set. */
function countPings(t: Awaited<ReturnType<typeof buildTestApp>>, state: { down?: boolean; delayMs?: number } = {}) {
  const counts = { storage: 0, limiter: 0 }
  const storagePing = t.storage.ping.bind(t.storage)
  t.storage.ping = async () => {
    counts.storage++
    if (state.delayMs) await sleep(state.delayMs)
    if (state.down) throw new Error('down')
    return storagePing()
  }
  const limiterPing = t.limiter.ping.bind(t.limiter)
  t.limiter.ping = async () => {
    counts.limiter++
    return limiterPing()
  }
  return counts
}

test('1,000 /readyz calls on both listeners cost one check per interval', async (context) => {
  const t = await buildTestApp(context, { storage: memoryStorage() })
  const admin = await t.admin()
  const pings = countPings(t)
  const started = performance.now()
  for (let i = 0; i < 1000; i++) {
    const res = await (i % 2 ? admin : t.app).inject({ url: '/readyz' })
    assert.equal(res.statusCode, 200)
  }
  const intervals = Math.ceil((performance.now() - started) / READINESS_MAX_AGE_MS)
  assert.ok(pings.storage >= 1 && pings.storage <= intervals, `${pings.storage} store pings in ${intervals} interval(s)`)
  assert.equal(pings.limiter, pings.storage)
})

test('concurrent /readyz calls share one check in flight', async (context) => {
  const t = await buildTestApp(context, { storage: memoryStorage() })
  const pings = countPings(t, { delayMs: 50 })
  const answers = await Promise.all(Array.from({ length: 50 }, () => t.app.inject({ url: '/readyz' })))
  assert.deepEqual(new Set(answers.map((r) => r.statusCode)), new Set([200]))
  assert.equal(pings.storage, 1)
})

test('a failure shows within the interval, and so does the recovery', async (context) => {
  const t = await buildTestApp(context, { storage: memoryStorage() })
  const state = { down: false }
  countPings(t, state)
  assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 200)
  state.down = true
  await sleep(READINESS_MAX_AGE_MS + 50)
  const down = await t.app.inject({ url: '/readyz' })
  assert.equal(down.statusCode, 503)
  assert.deepEqual(down.json().checks.database, { engine: 'sqlite', status: 'down' })
  state.down = false
  await sleep(READINESS_MAX_AGE_MS + 50)
  assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 200)
})
