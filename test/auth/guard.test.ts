import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { generateKey } from '../../src/keys/api-key.js'
import type { ManualClock } from '../../src/shared/clock.js'
import { bearer, buildSuiteApp, buildTestApp, TEST_NOW } from '../helpers/app.js'

describe('authentication', () => {
  let key: string
  const t = buildSuiteApp()
  before(async () => {
    key = await t.key({ plan: 'pro' })
  })
  const get = (headers: Record<string, string>) => t.app.inject({ url: '/v1/pets', headers })

  test('a valid key passes; the scheme is case-insensitive', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      assert.equal((await get({ authorization: `${scheme} ${key}` })).statusCode, 200)
    }
  })

  test('missing, malformed, unknown and wrong-environment keys are 401 with a challenge', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /Missing API key/],
      [{ authorization: key }, /Malformed Authorization/],
      [{ authorization: `Basic ${key}` }, /Malformed Authorization/],
      [{ authorization: 'Bearer ' }, /Malformed|Missing/],
      [{ authorization: `Bearer ${key}x` }, /Invalid or revoked/],
      [{ authorization: `Bearer ${generateKey('production')}` }, /Invalid or revoked/],
      [{ authorization: `Bearer ${generateKey('staging')}` }, /Invalid or revoked/],
      [{ authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` }, /Invalid or revoked/],
    ]
    for (const [headers, message] of cases) {
      const res = await get(headers)
      assert.equal(res.statusCode, 401, JSON.stringify(headers))
      assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'message', 'status'])
      assert.equal(res.json().code, 'unauthorized')
      assert.match(res.json().message, message)
      assert.match(res.headers['www-authenticate'] as string, /^Bearer realm="animal-store"/)
      assert.ok(res.headers['x-ratelimit-limit'], '401 carries rate-limit headers')
    }
  })

  test('authentication runs before validation: a keyless bad request is 401', async () => {
    assert.equal((await t.app.inject({ url: '/v1/pets?limit=0' })).statusCode, 401)
    assert.equal((await t.app.inject({ url: '/v1/pets/abc' })).statusCode, 401)
    const res = await t.app.inject({ method: 'POST', url: '/v1/pets', headers: { 'content-type': 'text/plain' }, payload: 'x' })
    assert.equal(res.statusCode, 401)
  })

  test('a revoked key is refused once the revocation is seen, without a restart', async () => {
    const fresh = await t.key()
    assert.equal((await get(bearer(fresh))).statusCode, 200)
    const record = (await t.storage.keys.listKeys()).find((k) => fresh.startsWith(k.prefix) && k.revokedAt === null && k.plan === 'free')!
    await t.storage.keys.revokeKey(record.id, Date.now())
    await t.domain.keyResolver.refresh()
    assert.equal((await get(bearer(fresh))).statusCode, 401)
  })

  test('keys are never echoed in responses', async () => {
    const res = await get({ authorization: `Bearer ${key}x` })
    assert.equal(res.body.includes(key), false)
    assert.equal(JSON.stringify(res.headers).includes(key), false)
  })
})

describe('rate limits', () => {
  test('every response carries X-RateLimit-* and the IETF draft fields; remaining counts down', async (context) => {
    const t = await buildTestApp(context)
    const key = bearer(await t.key({ plan: 'free' }))
    const minuteReset = Math.floor(TEST_NOW / 60_000) * 60 + 60
    for (let i = 1; i <= 3; i++) {
      const res = await t.app.inject({ url: '/v1/pets', headers: key })
      assert.equal(res.headers['x-ratelimit-limit'], '60')
      assert.equal(res.headers['x-ratelimit-remaining'], String(60 - i))
      assert.equal(res.headers['x-ratelimit-reset'], String(minuteReset))
      // The key's partition key (the draft's pk, a byte sequence): on every item of both fields.
      const pk = /;pk=(:[A-Za-z0-9+/]+=*:)/.exec(String(res.headers['ratelimit-policy']))?.[1]
      assert.ok(pk, String(res.headers['ratelimit-policy']))
      assert.equal(res.headers['ratelimit-policy'], `"minute";q=60;w=60;pk=${pk}, "day";q=1000;w=86400;pk=${pk}`)
      assert.equal(
        res.headers.ratelimit,
        `"minute";r=${60 - i};t=30;pk=${pk}, "day";r=${1000 - i};t=${(Date.UTC(2026, 10, 22) - TEST_NOW) / 1000};pk=${pk}`,
      )
    }
    // 4xx responses carry them too.
    const bad = await t.app.inject({ url: '/v1/pets?limit=0', headers: key })
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.headers['x-ratelimit-remaining'], '56')
    const missing = await t.app.inject({ url: '/v1/pets/424242', headers: key })
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.headers['x-ratelimit-remaining'], '55')
  })

  test('100 simultaneous requests of a Free key: exactly 60 pass, the rest are 429 with Retry-After', async (context) => {
    const t = await buildTestApp(context)
    const key = bearer(await t.key({ plan: 'free' }))
    const results = await Promise.all(Array.from({ length: 100 }, () => t.app.inject({ url: '/v1/pets', headers: key })))
    const ok = results.filter((r) => r.statusCode === 200)
    const limited = results.filter((r) => r.statusCode === 429)
    assert.equal(ok.length, 60)
    assert.equal(limited.length, 40)
    for (const r of limited) {
      assert.equal(r.json().code, 'rate_limited')
      assert.equal(r.json().status, 429)
      assert.equal(r.headers['retry-after'], '30')
      assert.equal(r.headers['x-ratelimit-remaining'], '0')
    }
  })

  test('the minute window resets on the clock minute; the day window on the UTC day', async (context) => {
    const t = await buildTestApp(context, { env: {} })
    const key = bearer(await t.key({ plan: 'enterprise', perMinute: 5, perDay: 7 }))
    const clock = t.clock as ManualClock
    const status = async () => (await t.app.inject({ url: '/v1/pets', headers: key })).statusCode
    for (let i = 0; i < 5; i++) assert.equal(await status(), 200)
    assert.equal(await status(), 429)
    clock.advance(30_000) // 12:01:00: a new minute
    assert.equal(await status(), 200)
    assert.equal(await status(), 200)
    const res = await t.app.inject({ url: '/v1/pets', headers: key })
    assert.equal(res.statusCode, 429, 'day window (7) exhausted')
    assert.equal(res.headers['x-ratelimit-limit'], '7', 'headers describe the tightest window: the day')
    assert.equal(res.headers['retry-after'], String((Date.UTC(2026, 10, 22) - clock.now()) / 1000))
    clock.set(Date.UTC(2026, 10, 22, 0, 0, 1))
    assert.equal(await status(), 200)
  })

  test('a request refused by one window consumes neither', async (context) => {
    const t = await buildTestApp(context)
    const key = bearer(await t.key({ plan: 'enterprise', perMinute: 2, perDay: 100 }))
    const clock = t.clock as ManualClock
    for (let i = 0; i < 5; i++) await t.app.inject({ url: '/v1/pets', headers: key })
    clock.advance(60_000)
    const res = await t.app.inject({ url: '/v1/pets', headers: key })
    assert.equal(res.statusCode, 200)
    assert.match(res.headers.ratelimit as string, /"day";r=97;/, 'only the 3 accepted requests counted in the day')
  })

  test('keyless and bad-key requests are limited per client address at Free rates', async (context) => {
    const t = await buildTestApp(context)
    const from = (ip: string, headers: Record<string, string> = {}) => t.app.inject({ url: '/v1/pets', remoteAddress: ip, headers })
    for (let i = 0; i < 60; i++) assert.equal((await from('10.0.0.1', i % 2 ? { authorization: 'Bearer wrong' } : {})).statusCode, 401)
    const res = await from('10.0.0.1')
    assert.equal(res.statusCode, 429)
    assert.equal(res.headers['x-ratelimit-limit'], '60')
    assert.equal((await from('10.0.0.2')).statusCode, 401, 'another address has its own window')
    const key = await t.key()
    // Known to this instance (cached): its own plan decides, whatever its address.
    assert.equal((await from('10.0.0.3', bearer(key))).statusCode, 200)
    assert.equal((await from('10.0.0.1', bearer(key))).statusCode, 200, 'a valid key is limited by its own plan')
  })

  test('a key that keeps sending while limited is banned, with exponential escalation', async (context) => {
    const t = await buildTestApp(context)
    const key = bearer(await t.key({ plan: 'free' }))
    const clock = t.clock as ManualClock
    const send = () => t.app.inject({ url: '/v1/pets', headers: key })
    for (let i = 0; i < 60; i++) assert.equal((await send()).statusCode, 200)
    for (let i = 0; i < 59; i++) assert.equal((await send()).json().code, 'rate_limited')
    const banned = await send()
    assert.equal(banned.statusCode, 429)
    assert.equal(banned.json().code, 'key_banned')
    assert.equal(banned.headers['retry-after'], '60')
    assert.equal(banned.headers['x-ratelimit-reset'], String(Math.floor(clock.now() / 1000) + 60))
    clock.advance(30_000) // next minute window, but still banned
    const still = await send()
    assert.equal(still.json().code, 'key_banned')
    assert.equal(still.headers['retry-after'], '30')
    clock.advance(30_000) // ban over
    assert.equal((await send()).statusCode, 200)
    for (let i = 0; i < 59; i++) await send()
    for (let i = 0; i < 60; i++) await send()
    const second = await send()
    assert.equal(second.json().code, 'key_banned')
    assert.ok(Number(second.headers['retry-after']) > 60, 'second ban is longer')
    assert.equal((await t.metrics.bans.get()).values[0]?.value, 2)
  })

  test('public endpoints are neither authenticated nor limited', async (context) => {
    const t = await buildTestApp(context)
    const admin = await t.admin()
    for (const [app, url] of [
      [t.app, '/healthz'],
      [t.app, '/readyz'],
      [t.app, '/v1/openapi.json'],
      [t.app, '/docs'],
      [admin, '/metrics'],
      [admin, '/healthz'],
    ] as const) {
      const res = await app.inject({ url })
      assert.ok(res.statusCode === 200 || res.statusCode === 302, `${url}: ${res.statusCode}`)
      assert.equal(res.headers['x-ratelimit-limit'], undefined, url)
    }
  })
})
