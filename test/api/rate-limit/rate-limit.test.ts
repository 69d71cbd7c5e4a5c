/**
 * GET /v1/rate_limit (api/rate-limit/get.ts, auth/uncounted-reads.ts) through app.inject, on the in-memory
 * limiter and on Redis: the caller's key and windows, not counted against the quota (issue 31's
 * figure: 10 requests and any number of reads, then 49 of 60 left), answered while the key is
 * exhausted or banned, counted past its own budget, shared by a customer's keys, left out of
 * usage history; 401 without a key, 400 for a query.
 */
import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { createAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { awayFromBoundary } from '../../helpers/windows.js'

type Headers = Record<string, string>
const bearer = (key: string): Headers => ({ authorization: `Bearer ${key}` })
const remaining = (res: LightMyRequestResponse) => Number(res.headers['x-ratelimit-remaining'])

/** The public API (`api`) and an admin call, on one service. */
interface App {
  api: TestApp['app']
  service: TestApp
  call(method: 'POST', url: string, body: unknown): Promise<LightMyRequestResponse>
}

const LIMITERS = [
  { name: 'memory', env: {} as Record<string, string> },
  { name: 'Redis', env: { REDIS_URL } },
]

for (const limiter of LIMITERS) {
  describe(`GET /v1/rate_limit (${limiter.name} limiter)`, () => {
    /** An app on this limiter; on Redis (whose clock decides the windows) away from a minute's end. */
    const open = async (t: TestContext): Promise<App | undefined> => {
      if (limiter.name === 'Redis') {
        if (!(await requireService(t, 'Redis'))) return undefined
        await awayFromBoundary(20_000)
      }
      const service = await buildTestApp(t, { env: limiter.env })
      assert.equal(service.limiter.kind, limiter.name === 'Redis' ? 'redis' : 'memory')
      const admin = await service.admin()
      const { token } = await createAdminToken(service.storage.adminTokens, 'test token')
      return {
        api: service.app,
        service,
        call: (method, url, body) =>
          admin.inject({ method, url, headers: { ...bearer(token), 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
      }
    }
    const newKey = async (app: App, body: Record<string, unknown>) => {
      const res = await app.call('POST', '/admin/v1/keys', { name: 'k', ...body })
      assert.equal(res.statusCode, 201, res.body)
      return res.json() as { key: string; apiKey: { id: string; prefix: string } }
    }
    const get = (app: App, url: string, headers: Headers) => app.api.inject({ url, headers })

    test('a key of any scopes reads its quota, and sees its scopes', async (t) => {
      const app = await open(t)
      if (!app) return
      const { key } = await newKey(app, { plan: 'free', scopes: ['orders:read'] })
      const res = await get(app, '/v1/rate_limit', bearer(key))
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json().key.scopes, ['orders:read'])
      assert.equal((await get(app, '/v1/pets', bearer(key))).statusCode, 403, 'while a pets read is refused')
    })

    test("issue 31's figure: 10 requests, any number of reads, then 49 of 60 left", async (t) => {
      const app = await open(t)
      if (app === undefined) return
      const { key, apiKey } = await newKey(app, { plan: 'free' })
      for (let i = 0; i < 10; i++) assert.equal((await get(app, '/v1/pets', bearer(key))).statusCode, 200)
      for (let i = 0; i < 5; i++) {
        const res = await get(app, '/v1/rate_limit', bearer(key))
        assert.equal(res.statusCode, 200, res.body)
        assert.equal(remaining(res), 50)
        assert.equal(res.headers['retry-after'], undefined)
        const body = res.json()
        assert.deepEqual(body.key, {
          id: apiKey.id,
          prefix: apiKey.prefix,
          plan: 'free',
          customerId: null,
          scopes: ['pets:read', 'pets:write', 'orders:read', 'orders:write'],
          expiresAt: null,
        })
        const [minute, day] = body.windows
        assert.deepEqual([minute.name, minute.limit, minute.used, minute.remaining], ['minute', 60, 10, 50])
        assert.deepEqual([day.name, day.limit, day.used, day.remaining], ['day', 1000, 10, 990])
        assert.equal(minute.reset, Number(res.headers['x-ratelimit-reset']))
        assert.ok(minute.resetAfter > 0 && minute.resetAfter <= 60)
        assert.ok(String(res.headers.ratelimit).startsWith(`"minute";r=50;t=${minute.resetAfter};pk=:${body.partitionKey}:,`))
        assert.equal(body.ban, null)
        assert.deepEqual([body.budget.limit, body.budget.remaining], [60, 59 - i])
        assert.equal(body.budget.reset, minute.reset)
      }
      assert.equal(remaining(await get(app, '/v1/pets', bearer(key))), 49)
    })

    test('answered while the quota is exhausted and while the key is banned, with the headers of the next request', async (t) => {
      const app = await open(t)
      if (app === undefined) return
      const { key } = await newKey(app, { plan: 'enterprise', perMinute: 2, perDay: 1000 })
      for (let i = 0; i < 2; i++) assert.equal((await get(app, '/v1/pets', bearer(key))).statusCode, 200)
      assertError(await get(app, '/v1/pets', bearer(key)), 429, 'rate_limited')

      const exhausted = await get(app, '/v1/rate_limit', bearer(key))
      assert.equal(exhausted.statusCode, 200, exhausted.body)
      assert.equal(remaining(exhausted), 0)
      assert.equal(exhausted.headers['retry-after'], undefined)
      assert.deepEqual(
        exhausted.json().windows.map((w: { used: number; remaining: number }) => [w.used, w.remaining]),
        [
          [2, 0],
          [2, 998],
        ],
      )
      assert.equal(exhausted.json().ban, null)

      // Sending on while limited starts a ban (BAN_THRESHOLD refusals within the minute).
      let refused = await get(app, '/v1/pets', bearer(key))
      for (let i = 0; i < 10 && refused.json().code === 'rate_limited'; i++) refused = await get(app, '/v1/pets', bearer(key))
      assertError(refused, 429, 'key_banned')
      const banned = await get(app, '/v1/rate_limit', bearer(key))
      assert.equal(banned.statusCode, 200, banned.body)
      const { ban } = banned.json()
      assert.ok(ban !== null && ban.retryAfter > 0, banned.body)
      assert.equal(ban.until - ban.retryAfter, Math.floor(ban.until - ban.retryAfter))
      assert.match(String(banned.headers.ratelimit), new RegExp(`"ban";r=0;t=${ban.retryAfter}$`))
      assert.equal(remaining(banned), 0)
      assert.ok(Number(banned.headers['x-ratelimit-reset']) >= ban.until)
      assertError(await get(app, '/v1/pets', bearer(key)), 429, 'key_banned')
    })

    test('past its own budget a read is counted like any request, and refused once the quota is gone', async (t) => {
      const app = await open(t)
      if (app === undefined) return
      const { key } = await newKey(app, { plan: 'enterprise', perMinute: 3, perDay: 1000 })
      for (let i = 0; i < 3; i++) {
        const res = await get(app, '/v1/rate_limit', bearer(key))
        assert.equal(res.statusCode, 200)
        assert.equal(res.json().windows[0].used, 0)
        assert.equal(res.json().budget.remaining, 2 - i)
      }
      for (let i = 1; i <= 3; i++) {
        const res = await get(app, '/v1/rate_limit', bearer(key))
        assert.equal(res.statusCode, 200, res.body)
        assert.equal(res.json().windows[0].used, i, 'counted: the answer shows it in the window')
        assert.equal(remaining(res), 3 - i)
        assert.equal(res.json().budget.remaining, 0)
      }
      assertError(await get(app, '/v1/rate_limit', bearer(key)), 429, 'rate_limited')
      assertError(await get(app, '/v1/pets', bearer(key)), 429, 'rate_limited')
    })

    test("a customer's keys see the same windows, partition key and budget", async (t) => {
      const app = await open(t)
      if (app === undefined) return
      const customer = await app.call('POST', '/admin/v1/customers', { name: 'Acme', plan: 'free' })
      assert.equal(customer.statusCode, 201, customer.body)
      const customerId = customer.json().id
      const a = await newKey(app, { customerId })
      const b = await newKey(app, { customerId })
      for (let i = 0; i < 3; i++) assert.equal((await get(app, '/v1/pets', bearer(a.key))).statusCode, 200)
      const fromA = (await get(app, '/v1/rate_limit', bearer(a.key))).json()
      const fromB = (await get(app, '/v1/rate_limit', bearer(b.key))).json()
      assert.equal(fromB.key.id, b.apiKey.id)
      assert.equal(fromB.key.customerId, customerId)
      assert.deepEqual(fromB.windows, fromA.windows)
      assert.equal(fromB.windows[0].used, 3)
      assert.equal(fromB.partitionKey, fromA.partitionKey)
      assert.deepEqual([fromA.budget.remaining, fromB.budget.remaining], [59, 58])
    })

    test('not in usage history unless counted; no key is 401, a query 400', async (t) => {
      const app = await open(t)
      if (app === undefined) return
      const { key } = await newKey(app, { plan: 'free' })
      assert.equal((await get(app, '/v1/pets', bearer(key))).statusCode, 200)
      assert.equal((await get(app, '/v1/rate_limit', bearer(key))).statusCode, 200)
      const totals = () => [...app.service.domain.recorders.usage.pendingTotals(0, Number.MAX_SAFE_INTEGER).values()][0]
      assert.deepEqual(totals(), { allowed: 1, rateLimited: 0, banned: 0, status2xx: 1, status4xx: 0, status5xx: 0 })

      assertError(await get(app, '/v1/rate_limit', {}), 401, 'unauthorized')
      assertError(await get(app, '/v1/rate_limit', { authorization: 'Bearer nope' }), 401, 'unauthorized')
      assertError(await get(app, '/v1/rate_limit?verbose=1', bearer(key)), 400, 'invalid_request')
      assert.equal((await get(app, '/v1/pets', bearer(key))).headers['x-ratelimit-remaining'], '58')
    })
  })
}
