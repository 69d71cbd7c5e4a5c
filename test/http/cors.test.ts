import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loadConfig } from '../../src/config/config.js'
import { bearer, buildSuiteApp } from '../helpers/app.js'

const APP = 'https://app.example.com'

describe('CORS', () => {
  describe('off by default', () => {
    const t = buildSuiteApp()

    test('a preflight is not answered as CORS, and responses carry no Access-Control headers', async () => {
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/v1/pets',
        headers: { origin: APP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      })
      assert.equal(preflight.statusCode, 405)
      assert.equal(preflight.headers['access-control-allow-origin'], undefined)
      const res = await t.app.inject({ url: '/v1/pets', headers: { ...bearer(await t.key()), origin: APP } })
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['access-control-allow-origin'], undefined)
    })
  })

  describe('with CORS_ORIGINS', () => {
    const t = buildSuiteApp({ env: { CORS_ORIGINS: `${APP},http://localhost:3000` } })

    test('a preflight from a listed origin is 204 with the methods and headers, no key needed, no credentials', async () => {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url: '/v1/pets',
        headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      })
      assert.equal(res.statusCode, 204)
      assert.equal(res.headers['access-control-allow-origin'], APP)
      assert.match(String(res.headers['access-control-allow-methods']), /POST/)
      assert.match(String(res.headers['access-control-allow-headers']), /Authorization/)
      assert.equal(res.headers['access-control-max-age'], '600')
      assert.equal(res.headers['access-control-allow-credentials'], undefined)
    })

    test('a call from a listed origin exposes the rate-limit headers; another origin gets no grant', async () => {
      const key = bearer(await t.key())
      const res = await t.app.inject({ url: '/v1/pets', headers: { ...key, origin: APP } })
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['access-control-allow-origin'], APP)
      assert.match(String(res.headers.vary), /Origin/)
      assert.match(String(res.headers['access-control-expose-headers']), /X-RateLimit-Remaining/)
      assert.match(String(res.headers['access-control-expose-headers']), /Retry-After/)
      const other = await t.app.inject({ url: '/v1/pets', headers: { ...key, origin: 'https://evil.example' } })
      assert.equal(other.statusCode, 200)
      assert.equal(other.headers['access-control-allow-origin'], undefined)
    })

    test('unknown paths stay 404 (the preflight catch-all route does not make every path exist)', async () => {
      const res = await t.app.inject({ method: 'DELETE', url: '/nothing/here', headers: bearer(await t.key()) })
      assert.equal(res.statusCode, 404)
      assert.equal(res.json().code, 'not_found')
    })
  })

  test('CORS_ORIGINS accepts * or exact origins, and names a bad entry', () => {
    assert.equal(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, '*')
    assert.deepEqual(loadConfig({ CORS_ORIGINS: `${APP}, http://localhost:3000` }).corsOrigins, [APP, 'http://localhost:3000'])
    assert.throws(
      () => loadConfig({ CORS_ORIGINS: 'https://app.example.com/path' }),
      /CORS_ORIGINS .*bad entry "https:\/\/app.example.com\/path"/,
    )
    assert.throws(() => loadConfig({ CORS_ORIGINS: 'app.example.com' }), /CORS_ORIGINS/)
  })
})
