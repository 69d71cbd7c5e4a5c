/** GET /v1/pets/{petId} (getPet, deprecated, api/pets/get.ts) through app.inject: the animal, its deprecation and sunset, its cache. */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import type { ManualClock } from '../../../src/shared/clock.js'
import { SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildSuiteApp, buildTestApp } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'

describe('getPet (deprecated)', () => {
  let auth: Record<string, string>
  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    })

  const t = buildSuiteApp()
  before(async () => {
    auth = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })

  test('200 with Deprecation, Sunset and Link headers', async () => {
    const created = (await post({ name: 'Old', categoryId: 3 })).json()
    const res = await t.app.inject({ url: `/v1/pets/${created.id}`, headers: auth })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), created)
    assert.match(res.headers.deprecation as string, /^@\d+$/)
    assert.equal(res.headers.sunset, 'Thu, 05 Dec 2030 00:00:00 GMT')
    assert.match(res.headers.link as string, /<\/v1\/pets>; rel="successor-version"/)
    assert.match(res.headers.link as string, /rel="deprecation"/)
  })

  test('404 for an unknown id, 400 for a malformed one', async () => {
    assertError(await t.app.inject({ url: '/v1/pets/999999', headers: auth }), 404, 'not_found', /999999/)
    assertError(await t.app.inject({ url: '/v1/pets/9223372036854775807', headers: auth }), 404, 'not_found')
    for (const bad of ['abc', '1.5', '9223372036854775808', '1e3', '%20']) {
      assertError(await t.app.inject({ url: `/v1/pets/${bad}`, headers: auth }), 400, 'invalid_request', /petId/)
    }
  })

  test('a found animal is read from the store once (until an animal changes); a miss is not kept', async (context) => {
    const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
    const reads: unknown[] = []
    const getPet = storage.pets.getPet.bind(storage.pets)
    storage.pets.getPet = (id) => {
      reads.push(id)
      return getPet(id)
    }
    const app = await buildTestApp(context, { storage })
    const key = bearer(await app.key({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 }))
    const get = () => app.app.inject({ url: '/v1/pets/1', headers: key })
    assertError(await get(), 404, 'not_found')
    const created = await app.app.inject({ method: 'POST', url: '/v1/pets', headers: key, payload: { name: 'Late', categoryId: 9 } })
    assert.equal(created.statusCode, 201)
    const first = await get()
    const second = await get()
    assert.deepEqual([first.statusCode, second.statusCode], [200, 200])
    assert.deepEqual(first.json(), created.json(), 'the animal created after the 404 is found')
    assert.equal(second.body, first.body)
    assert.equal(second.headers['content-type'], 'application/json; charset=utf-8')
    assert.equal(second.headers['content-length'], String(Buffer.byteLength(first.body)))
    assert.deepEqual(reads, [1, 1], 'one read for the miss, one for the first find')
    const head = await app.app.inject({ method: 'HEAD', url: '/v1/pets/1', headers: key })
    assert.deepEqual([head.statusCode, head.body, head.headers['content-length']], [200, '', first.headers['content-length']])
  })

  test('after the sunset: 410 Gone with an Error body, for existing and unknown ids', async (context) => {
    const app = await buildTestApp(context)
    const key = bearer(await app.key())
    ;(app.clock as ManualClock).set(Date.UTC(2030, 11, 5))
    const res = await app.app.inject({ url: '/v1/pets/1', headers: key })
    assertError(res, 410, 'gone', /GET \/v1\/pets/)
    assert.equal(res.headers.sunset, 'Thu, 05 Dec 2030 00:00:00 GMT')
    ;(app.clock as ManualClock).set(Date.UTC(2030, 11, 4, 23, 59, 59))
    assert.equal((await app.app.inject({ url: '/v1/pets/1', headers: key })).statusCode, 404)
  })
})
