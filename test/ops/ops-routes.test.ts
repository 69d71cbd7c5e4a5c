import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import type { RateLimiter } from '../../src/limits/limiter.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildTestApp } from '../helpers/app.js'

test('healthz, readyz and metrics (on the admin listener)', async (context) => {
  const t = await buildTestApp(context)
  assert.deepEqual((await t.app.inject({ url: '/healthz' })).json(), { status: 'ok' })
  const ready = await t.app.inject({ url: '/readyz' })
  assert.equal(ready.statusCode, 200)
  assert.deepEqual(ready.json().checks.database, { engine: 'sqlite', status: 'up' })
  const key = bearer(await t.key({ plan: 'enterprise', perMinute: 2, perDay: 10 }))
  for (let i = 0; i < 3; i++) await t.app.inject({ url: '/v1/pets', headers: key })
  assert.equal((await t.app.inject({ url: '/metrics' })).statusCode, 404, 'not on the main listener')
  const metrics = (await (await t.admin()).inject({ url: '/metrics' })).body
  assert.match(metrics, /animal_store_http_requests_total\{method="GET",route="\/v1\/pets",status="200"\} 2/)
  assert.match(metrics, /animal_store_http_requests_total\{method="GET",route="\/v1\/pets",status="429"\} 1/)
  assert.match(metrics, /animal_store_rate_limited_total\{code="rate_limited"\} 1/)
  assert.match(metrics, /animal_store_http_request_duration_seconds_bucket/)
  assert.equal(metrics.includes('as_live_'), false, 'no key in metrics')
  assert.match(metrics, /^animal_store_usage_dropped_total 0$/m, 'usage history drops nothing while storage takes its writes')
  assert.doesNotMatch(metrics, /key_[0-9A-Za-z]{16}/, 'no key id in metrics (usage per key is the admin API)')
})

test('readyz is 503 and names the dependency when storage is down', async (context) => {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  storage.ping = async () => {
    throw new Error('down')
  }
  const t = await buildTestApp(context, { storage })
  const res = await t.app.inject({ url: '/readyz' })
  assert.equal(res.statusCode, 503)
  assert.equal(res.json().checks.database.status, 'down')
})

test('readyz reports a failing limiter; fails only when the limiter is required (fail-closed Redis)', async (context) => {
  const down: RateLimiter = {
    kind: 'redis',
    consume: async () => {
      throw new Error('unused')
    },
    peek: async () => {
      throw new Error('unused')
    },
    ping: async () => {
      throw new Error('down')
    },
    close: async () => {},
  }
  for (const [policy, status] of [
    ['open', 200],
    ['closed', 503],
  ] as const) {
    const t = await buildTestApp(context, { limiter: down, env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_FAILURE_POLICY: policy } })
    const res = await t.app.inject({ url: '/readyz' })
    assert.equal(res.statusCode, status, policy)
    // Fail-open serves on per-instance limits: still ready for the load balancer, but not "ready".
    assert.equal(res.json().status, policy === 'open' ? 'degraded' : 'unavailable', policy)
    assert.deepEqual(res.json().checks.rateLimiter, { store: 'redis', status: 'down' })
  }
})

test('GET / points at the docs and the OpenAPI document, with no key and no rate limit', async (context) => {
  const t = await buildTestApp(context)
  const openapi = (await t.app.inject({ url: '/v1/openapi.json' })).json() as { info: { version: string } }
  // More requests than the keyless per-address limit (Free: 60/min): none is limited or counted.
  for (let i = 0; i < 65; i++) {
    const res = await t.app.inject({ url: '/' })
    assert.equal(res.statusCode, 200, res.body)
    assert.match(res.headers['content-type'] as string, /^application\/json/)
    const { version: release } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    assert.deepEqual(res.json(), {
      name: 'Animal Store API',
      version: openapi.info.version,
      serviceVersion: release,
      docs: '/docs',
      openapi: '/v1/openapi.json',
    })
    assert.equal(res.headers['x-ratelimit-limit'], undefined, 'not rate-limited')
  }
  const { docs, openapi: openapiPath } = (await t.app.inject({ url: '/' })).json() as { docs: string; openapi: string }
  assert.match((await t.app.inject({ url: docs })).headers['content-type'] as string, /^text\/html/, 'docs is the Swagger UI page')
  assert.deepEqual((await t.app.inject({ url: openapiPath })).json(), openapi, 'openapi is the OpenAPI document')
  const head = await t.app.inject({ method: 'HEAD', url: '/' })
  assert.equal(head.statusCode, 200)
  assert.equal(head.body, '')
  // Still a closed route: another method is not served, in the Error shape.
  const post = await t.app.inject({ method: 'POST', url: '/', payload: {} })
  assert.ok(post.statusCode >= 400 && post.statusCode < 500, `POST / is refused (${post.statusCode})`)
  assert.equal(typeof post.json().code, 'string')
  // Not part of the /v1 API description.
  assert.equal(Object.keys((openapi as unknown as { paths: Record<string, unknown> }).paths).includes('/'), false)
})
