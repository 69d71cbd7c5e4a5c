import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { toApiError } from '../../src/http/error-handler.js'
import type { RateLimiter } from '../../src/limits/limiter.js'
import { ERROR_STATUS } from '../../src/shared/errors.js'
import { LimiterUnavailableError, StorageUnavailableError } from '../../src/shared/outages.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildSuiteApp, buildTestApp } from '../helpers/app.js'

const shape = (body: string) => Object.keys(JSON.parse(body)).sort()

describe('errors', () => {
  let key: Record<string, string>
  const t = buildSuiteApp()
  before(async () => {
    key = bearer(await t.key({ plan: 'pro' }))
  })

  test('unknown routes are 404 in the Error shape', async () => {
    for (const url of ['/v2/pets', '/v1/pets/1/owners', '/v1/store/carts', '/v1//pets']) {
      const res = await t.app.inject({ url, headers: key })
      assert.equal(res.statusCode, 404, url)
      assert.match(res.headers['content-type'] as string, /^application\/json/)
      assert.deepEqual(shape(res.body), ['code', 'message', 'status'])
      assert.equal(res.json().code, 'not_found')
    }
  })

  // Issue 32 changed this deliberately: it was a 400 "petId must be an int64" (an empty id).
  test('a trailing slash is a 404 naming the path meant', async () => {
    const res = await t.app.inject({ url: '/v1/pets/', headers: key })
    assert.equal(res.statusCode, 404)
    assert.match(res.json().message, /did you mean \/v1\/pets\?/)
  })

  test('wrong methods are 405 with Allow', async () => {
    const cases: [string, string, string][] = [
      ['DELETE', '/v1/pets', 'GET, HEAD, POST'],
      ['PUT', '/v1/pets', 'GET, HEAD, POST'],
      ['PATCH', '/v1/pets/1', 'GET, HEAD'],
      ['POST', '/v1/pets/1', 'GET, HEAD'],
      ['DELETE', '/v1/pets/1', 'GET, HEAD'],
    ]
    for (const [method, url, allow] of cases) {
      const res = await t.app.inject({ method: method as 'GET', url, headers: key })
      assert.equal(res.statusCode, 405, `${method} ${url}`)
      assert.equal(res.headers.allow, allow)
      assert.equal(res.json().code, 'method_not_allowed')
      assert.equal(res.json().status, 405)
    }
  })

  test('security headers suitable for a JSON API, on successes and errors', async () => {
    for (const [url, headers] of [
      ['/v1/pets', key],
      ['/v1/pets', {}],
      ['/nope', key],
    ] as const) {
      const res = await t.app.inject({ url, headers })
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url)
      assert.equal(res.headers['cache-control'], 'no-store', url)
      assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", url)
      assert.match(res.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/)
    }
  })

  test('HEAD works where GET does', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/v1/pets', headers: key })
    assert.equal(res.statusCode, 200)
  })

  test('an unexpected failure is 500 internal_error with nothing internal in it', async (context) => {
    const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
    const secret = 'SQLITE_CORRUPT at /var/secret/path.db line 42'
    storage.pets.listPets = async () => {
      throw new Error(secret)
    }
    const app = await buildTestApp(context, { storage })
    const res = await app.app.inject({ url: '/v1/pets', headers: bearer(await app.key()) })
    assert.equal(res.statusCode, 500)
    assert.deepEqual(res.json(), { code: 'internal_error', message: res.json().message, status: 500 })
    assert.equal(res.body.includes('SQLITE'), false)
    assert.equal(res.body.includes('secret'), false)
    assert.equal(res.body.includes('at '), false, 'no stack trace')
  })

  test('an unavailable database is 503 service_unavailable with Retry-After', async (context) => {
    const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
    storage.pets.createPet = async () => {
      throw new StorageUnavailableError(new Error('ECONNREFUSED'))
    }
    const app = await buildTestApp(context, { storage })
    const res = await app.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...bearer(await app.key()), 'content-type': 'application/json' },
      payload: '{"name":"x","categoryId":1}',
    })
    assert.equal(res.statusCode, 503)
    assert.equal(res.json().code, 'service_unavailable')
    assert.equal(res.headers['retry-after'], '1')
    assert.equal(res.body.includes('ECONNREFUSED'), false)
  })

  test('a limiter that fails closed gives 503, not a crash', async (context) => {
    const limiter: RateLimiter = {
      kind: 'broken',
      consume: async () => {
        throw new LimiterUnavailableError()
      },
      // As RedisLimiter's does under REDIS_FAILURE_POLICY=closed (the guard peeks before it looks a key up).
      peek: async () => {
        throw new LimiterUnavailableError()
      },
      ping: async () => {
        throw new Error('down')
      },
      close: async () => {},
    }
    const app = await buildTestApp(context, { limiter })
    const res = await app.app.inject({ url: '/v1/pets', headers: bearer(await app.key()) })
    assert.equal(res.statusCode, 503)
    assert.equal(res.json().code, 'service_unavailable')
  })

  test('every code maps to one status, and the mapping covers what the handler produces', () => {
    assert.equal(toApiError(new Error('x')).code, 'internal_error')
    assert.equal(toApiError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 })).status, 413)
    for (const [code, status] of Object.entries(ERROR_STATUS)) assert.ok(status >= 400 && status < 600, code)
  })
})
