/**
 * Conditional reads (http/conditional-reads.ts, auth/uncounted-reads.ts): a strong ETag on the
 * 200 of the five reads, keyed with the database's secret; 304 without a body for a matching
 * If-None-Match, not counted against the quota up to the secondary budget when it named the tag
 * (`*` is counted); a change changes the tag; no key is still 401.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { EntityTags, ifNoneMatchNames } from '../../src/http/conditional-reads.js'
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

type Headers = Record<string, string>

const get = (t: TestApp, url: string, headers: Headers) => t.app.inject({ url, headers })
const post = (t: TestApp, url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    payload: payload as string,
  })
const remaining = (res: LightMyRequestResponse) => Number(res.headers['x-ratelimit-remaining'])

/** A pet, an order of another pet, and the five reads (with their URLs) of that store. */
async function store(t: TestApp, key: Headers) {
  const pet = (await post(t, '/v1/pets', key, { name: 'Rex', categoryId: 1, status: 'available' })).json()
  const held = (await post(t, '/v1/pets', key, { name: 'Max', categoryId: 1, status: 'available' })).json()
  const order = (await post(t, '/v1/store/orders', key, { petId: held.id })).json()
  return {
    pet,
    order,
    urls: ['/v1/pets', `/v1/pets/${pet.id}`, '/v1/store/orders', `/v1/store/orders/${order.id}`, '/v1/store/inventory'],
  }
}

describe('If-None-Match as RFC 9110 reads it', () => {
  test('a list of tags, weak or strong, or *', () => {
    const tags = new EntityTags('a secret')
    const tag = tags.of('[]')
    assert.match(tag, /^"[A-Za-z0-9_-]{43}"$/)
    assert.equal(ifNoneMatchNames(undefined, tag), false)
    assert.equal(ifNoneMatchNames(tag, tag), true)
    assert.equal(ifNoneMatchNames(`W/${tag}`, tag), true)
    assert.equal(ifNoneMatchNames(`"x", ${tag}`, tag), true)
    assert.equal(ifNoneMatchNames(`"x",W/${tag}`, tag), true)
    assert.equal(ifNoneMatchNames(' * ', tag), true)
    assert.equal(ifNoneMatchNames('"x", "y"', tag), false)
    assert.equal(ifNoneMatchNames(tag.slice(1, -1), tag), false)
    // The Link header is part of the answer: a page that gains a next page has another tag.
    assert.notEqual(tags.of('[]', undefined), tags.of('[]', '<x>; rel="next"'))
  })
})

describe('conditional reads', () => {
  test('every read has a strong ETag, the same while nothing changes; a 200 without If-None-Match is as before', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'pro' }))
    const { urls } = await store(app, key)
    for (const url of urls) {
      const [a, b] = [await get(app, url, key), await get(app, url, key)]
      assert.equal(a.statusCode, 200, `${url}: ${a.body}`)
      assert.match(String(a.headers.etag), /^"[A-Za-z0-9_-]{43}"$/, url)
      assert.equal(a.headers.etag, b.headers.etag, url)
      assert.equal(a.body, b.body, url)
      assert.equal(a.headers['content-type'], 'application/json; charset=utf-8', url)
      assert.equal(remaining(b), remaining(a) - 1, url)
      // Of the body (and of a list's rel="next" Link: getPet's Link is its deprecation's, not part of the answer).
      const list = url === '/v1/pets' || url === '/v1/store/orders'
      const tags = new EntityTags(app.storage.serviceSecret)
      assert.equal(a.headers.etag, tags.of(a.body, list ? (a.headers.link as string | undefined) : undefined), url)
    }
    // Not on the other answers.
    assert.equal((await post(app, '/v1/pets', key, { name: 'Zed', categoryId: 1 })).headers.etag, undefined)
    assert.equal((await get(app, '/v1/pets/987654', key)).headers.etag, undefined)
  })

  test('a matching If-None-Match: 304, no body, rate-limit headers, nothing counted; then a 200 counts', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'free' }))
    const { urls } = await store(app, key)
    for (const url of urls) {
      const first = await get(app, url, key)
      const before = remaining(first)
      for (const inm of [first.headers.etag as string, `W/${first.headers.etag}`, `"nope", ${first.headers.etag}`]) {
        const res = await get(app, url, { ...key, 'if-none-match': inm })
        assert.equal(res.statusCode, 304, `${url} ${inm}: ${res.body}`)
        assert.equal(res.body, '')
        assert.equal(res.headers.etag, first.headers.etag)
        assert.equal(res.headers['content-type'], undefined)
        for (const h of ['x-ratelimit-limit', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit', 'x-request-id'])
          assert.ok(res.headers[h] !== undefined, `${url}: ${h}`)
        assert.equal(remaining(res), before, `${url}: a 304 is not counted`)
      }
      const stale = await get(app, url, { ...key, 'if-none-match': '"stale"' })
      assert.equal(stale.statusCode, 200)
      assert.equal(stale.body, first.body)
      assert.equal(stale.headers.etag, first.headers.etag)
      assert.equal(remaining(stale), before - 1, `${url}: a 200 is counted`)
      assert.equal(remaining(await get(app, url, key)), before - 2)
    }
  })

  test('If-None-Match: * is a 304 (RFC 9110) but counted: it shows no copy held', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'free' }))
    const { urls } = await store(app, key)
    for (const url of urls) {
      const first = await get(app, url, key)
      for (const [i, inm] of ['*', ' * '].entries()) {
        const res = await get(app, url, { ...key, 'if-none-match': inm })
        assert.equal(res.statusCode, 304, `${url} ${inm}: ${res.body}`)
        assert.equal(res.body, '')
        assert.equal(res.headers.etag, first.headers.etag)
        assert.equal(remaining(res), remaining(first) - 1 - i, `${url} ${inm}: counted`)
      }
    }
  })

  test('a Free key polling with *: its plan’s 60 a minute, then 429s (not 10 times that)', async (t) => {
    const app = await buildTestApp(t)
    const key = { ...bearer(await app.key({ plan: 'free' })), 'if-none-match': '*' }
    const statuses: Record<number, number> = {}
    for (let i = 0; i < 100; i++) {
      const res = await get(app, '/v1/store/inventory', key)
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
    }
    assert.deepEqual(statuses, { 304: 60, 429: 40 })
  })

  test('the tag says nothing of the answer: not a hash of the body, another database another tag', async (t) => {
    const [one, other] = [await buildTestApp(t), await buildTestApp(t)]
    const answers = await Promise.all(
      [one, other].map(async (app) => get(app, '/v1/store/inventory', bearer(await app.key({ plan: 'pro' })))),
    )
    const [a, b] = answers as [LightMyRequestResponse, LightMyRequestResponse]
    assert.equal(a.body, b.body)
    assert.notEqual(a.headers.etag, b.headers.etag, 'keyed with each database’s own secret')
    // The attacker's method: the inventory's likely answers, each hashed as the tag was made before.
    const sha256 = (body: string) => `"${createHash('sha256').update(body).update('\0').digest('base64url')}"`
    const range = Array.from({ length: 30 }, (_, n) => n)
    for (const available of range)
      for (const pending of range)
        for (const sold of range) {
          const body = JSON.stringify({ available, pending, sold })
          assert.notEqual(sha256(body), a.headers.etag, `the tag gave the inventory away: ${body}`)
        }
  })

  test('usage history: a free 304 is not counted, a 200 is', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'pro' }))
    const tag = (await get(app, '/v1/store/inventory', key)).headers.etag as string
    const totals = () => [...app.domain.recorders.usage.pendingTotals(0, Number.MAX_SAFE_INTEGER).values()][0]
    assert.equal(totals()?.allowed, 1)
    assert.equal((await get(app, '/v1/store/inventory', { ...key, 'if-none-match': tag })).statusCode, 304)
    assert.equal(totals()?.allowed, 1)
    assert.equal((await get(app, '/v1/store/inventory', { ...key, 'if-none-match': '"x"' })).statusCode, 200)
    assert.deepEqual(totals(), { allowed: 2, rateLimited: 0, banned: 0, status2xx: 2, status4xx: 0, status5xx: 0 })
  })

  test('a change changes the tags it touches: a stale tag gets the new 200', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'pro' }))
    const { pet, order } = await store(app, key)
    const tags = async () =>
      Object.fromEntries(
        await Promise.all(
          ['/v1/pets', `/v1/pets/${pet.id}`, '/v1/store/orders', `/v1/store/orders/${order.id}`, '/v1/store/inventory'].map(async (url) => [
            url,
            (await get(app, url, key)).headers.etag as string,
          ]),
        ),
      ) as Record<string, string>
    const before = await tags()

    // A new pet: the list; nothing of the store.
    await post(app, '/v1/pets', key, { name: 'Zed', categoryId: 2 })
    const created = await tags()
    assert.notEqual(created['/v1/pets'], before['/v1/pets'])
    assert.equal(created[`/v1/pets/${pet.id}`], before[`/v1/pets/${pet.id}`])
    assert.equal(created['/v1/store/inventory'], before['/v1/store/inventory'])
    assert.equal(created['/v1/store/orders'], before['/v1/store/orders'])

    // An order for the pet: the pet, the list, the orders and the inventory.
    const placed = (await post(app, '/v1/store/orders', key, { petId: pet.id })).json()
    const ordered = await tags()
    for (const url of ['/v1/pets', `/v1/pets/${pet.id}`, '/v1/store/orders', '/v1/store/inventory'])
      assert.notEqual(ordered[url], created[url], url)
    assert.equal(ordered[`/v1/store/orders/${order.id}`], created[`/v1/store/orders/${order.id}`])
    const stale = await get(app, `/v1/pets/${pet.id}`, { ...key, 'if-none-match': created[`/v1/pets/${pet.id}`]! })
    assert.equal(stale.statusCode, 200)
    assert.equal(stale.json().status, 'pending')

    // Cancelling the first order: that order, the orders list, the inventory.
    assert.equal((await post(app, `/v1/store/orders/${order.id}/cancel`, key)).statusCode, 200)
    const cancelled = await tags()
    for (const url of [`/v1/store/orders/${order.id}`, '/v1/store/orders', '/v1/store/inventory'])
      assert.notEqual(cancelled[url], ordered[url], url)
    const again = await get(app, `/v1/store/orders/${order.id}`, { ...key, 'if-none-match': ordered[`/v1/store/orders/${order.id}`]! })
    assert.equal(again.statusCode, 200)
    assert.equal(again.json().status, 'cancelled')
    assert.ok(placed.id)
  })

  test('no key, a bad key: 401 whatever If-None-Match says; a 404 or a 400 is counted', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'free' }))
    const { urls } = await store(app, key)
    for (const url of urls) {
      assertError(await get(app, url, { 'if-none-match': '*' }), 401, 'unauthorized')
      assertError(await get(app, url, { ...bearer('as_test_nope'), 'if-none-match': '*' }), 401, 'unauthorized')
    }
    const before = remaining(await get(app, '/v1/store/inventory', { ...key, 'if-none-match': '*' }))
    const missing = await get(app, '/v1/pets/987654', { ...key, 'if-none-match': '*' })
    assertError(missing, 404, 'not_found')
    assert.equal(remaining(missing), before - 1)
    const bad = await get(app, '/v1/store/orders?limit=0', { ...key, 'if-none-match': '*' })
    assertError(bad, 400, 'invalid_request')
    assert.equal(remaining(bad), before - 2)
  })

  test('the secondary budget: past 10 times the minute limit, conditional reads are counted, then refused with the usual 429', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'enterprise', perMinute: 3, perDay: 1000 }))
    const tag = (await get(app, '/v1/store/inventory', key)).headers.etag as string
    const conditional = { ...key, 'if-none-match': tag }
    for (let i = 0; i < 30; i++) {
      const res = await get(app, '/v1/store/inventory', conditional)
      assert.equal(res.statusCode, 304)
      assert.equal(remaining(res), 2)
    }
    // Budget spent: still a 304 when it matches, but counted.
    const counted = await get(app, '/v1/store/inventory', conditional)
    assert.equal(counted.statusCode, 304)
    assert.equal(remaining(counted), 1)
    assert.equal(remaining(await get(app, '/v1/store/inventory', conditional)), 0)
    const refused = await get(app, '/v1/store/inventory', conditional)
    assertError(refused, 429, 'rate_limited')
    assert.ok(Number(refused.headers['retry-after']) > 0)
  })

  test('a key whose minute is spent gets its 429 for a conditional read too, and a ban holds', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'enterprise', perMinute: 2, perDay: 1000 }))
    const tag = (await get(app, '/v1/store/inventory', key)).headers.etag as string
    assert.equal((await get(app, '/v1/store/inventory', key)).statusCode, 200)
    assertError(await get(app, '/v1/store/inventory', { ...key, 'if-none-match': tag }), 429, 'rate_limited')
  })

  test('a 200 that finds the quota spent meanwhile is the 429', async (t) => {
    const app = await buildTestApp(t)
    const key = bearer(await app.key({ plan: 'enterprise', perMinute: 2, perDay: 1000 }))
    assert.equal((await get(app, '/v1/store/inventory', key)).statusCode, 200)
    // Both pass the guard with one request left; the first 200 takes it, the second is refused.
    const [a, b] = await Promise.all([
      get(app, '/v1/store/inventory', { ...key, 'if-none-match': '"old"' }),
      get(app, '/v1/pets/987654', { ...key, 'if-none-match': '"old"' }),
    ])
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 429])
    const refused = a.statusCode === 429 ? a : b
    assertError(refused, 429, 'rate_limited')
    assert.equal(refused.headers.etag, undefined)
  })
})
