import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RateLimiter } from '../../src/limits/limiter.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildTestApp } from '../helpers/app.js'

test('healthz, readyz and metrics', async () => {
  const t = await buildTestApp()
  try {
    assert.deepEqual((await t.app.inject({ url: '/healthz' })).json(), { status: 'ok' })
    const ready = await t.app.inject({ url: '/readyz' })
    assert.equal(ready.statusCode, 200)
    assert.deepEqual(ready.json().checks.database, { engine: 'sqlite', status: 'up' })
    const key = bearer(await t.key({ plan: 'enterprise', perMinute: 2, perDay: 10 }))
    for (let i = 0; i < 3; i++) await t.app.inject({ url: '/v1/pets', headers: key })
    const metrics = (await t.app.inject({ url: '/metrics' })).body
    assert.match(metrics, /animal_store_http_requests_total\{method="GET",route="\/v1\/pets",status="200"\} 2/)
    assert.match(metrics, /animal_store_http_requests_total\{method="GET",route="\/v1\/pets",status="429"\} 1/)
    assert.match(metrics, /animal_store_rate_limited_total\{code="rate_limited"\} 1/)
    assert.match(metrics, /animal_store_http_request_duration_seconds_bucket/)
    assert.equal(metrics.includes('as_live_'), false, 'no key in metrics')
  } finally {
    await t.close()
  }
})

test('readyz is 503 and names the dependency when storage is down', async () => {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  storage.ping = async () => {
    throw new Error('down')
  }
  const t = await buildTestApp({ storage })
  try {
    const res = await t.app.inject({ url: '/readyz' })
    assert.equal(res.statusCode, 503)
    assert.equal(res.json().checks.database.status, 'down')
  } finally {
    await t.close()
  }
})

test('readyz reports a failing limiter; fails only when the limiter is required (fail-closed Redis)', async () => {
  const down: RateLimiter = {
    kind: 'redis',
    consume: async () => {
      throw new Error('unused')
    },
    ping: async () => {
      throw new Error('down')
    },
    close: async () => {},
  }
  for (const [policy, status] of [['open', 200], ['closed', 503]] as const) {
    const t = await buildTestApp({ limiter: down, env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_FAILURE_POLICY: policy } })
    try {
      const res = await t.app.inject({ url: '/readyz' })
      assert.equal(res.statusCode, status, policy)
      assert.deepEqual(res.json().checks.rateLimiter, { store: 'redis', status: 'down' })
    } finally {
      await t.close()
    }
  }
})
