import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import type { ManualClock } from '../../src/shared/clock.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildSuiteApp, buildTestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

describe('pets routes', () => {
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

  describe('createPet', () => {
    test('201 with the assigned id, the body and a Location header', async () => {
      const res = await post({ name: 'Rex', categoryId: 7, status: 'available' })
      assert.equal(res.statusCode, 201)
      const pet = res.json()
      assert.deepEqual(Object.keys(pet), ['id', 'name', 'categoryId', 'status'])
      assert.equal(typeof pet.id, 'number')
      assert.deepEqual({ ...pet, id: 0 }, { id: 0, name: 'Rex', categoryId: 7, status: 'available' })
      assert.equal(res.headers.location, `/v1/pets/${pet.id}`)
    })

    test('an absent status is omitted, never null', async () => {
      const res = await post({ name: 'Tom', categoryId: 1 })
      assert.equal(res.statusCode, 201)
      assert.equal(res.body.includes('status'), false)
      const got = await t.app.inject({ url: res.headers.location as string, headers: auth })
      assert.equal(got.body.includes('status'), false)
      assert.equal(got.body.includes('null'), false)
    })

    test('categoryId is int64 and exact beyond 2^53, through parse, store and serialize', async () => {
      for (const literal of ['9007199254740993', '9223372036854775807', '-9223372036854775808', '-9007199254740993']) {
        const res = await post(`{"name":"Big","categoryId":${literal}}`)
        assert.equal(res.statusCode, 201, res.body)
        assert.match(res.body, new RegExp(`"categoryId":${literal}[,}]`))
        const got = await t.app.inject({ url: res.headers.location as string, headers: auth })
        assert.match(got.body, new RegExp(`"categoryId":${literal}[,}]`))
        const list = await t.app.inject({ url: `/v1/pets?limit=1&after=${Number(res.json().id) - 1}`, headers: auth })
        assert.match(list.body, new RegExp(`"categoryId":${literal}[,}]`))
      }
    })

    test('categoryId outside int64, fractional, or not a number is 400 naming the field', async () => {
      for (const literal of [
        '9223372036854775808',
        '-9223372036854775809',
        '1.5',
        '"5"',
        'true',
        'null',
        '1e400',
        '9007199254740993.0',
        '[1]',
        '{}',
      ]) {
        const res = await post(`{"name":"X","categoryId":${literal}}`)
        assertError(res, 400, 'invalid_request', 'categoryId')
      }
    })

    test('integers are written one way: an exponent or a fraction is 400, as in a query or a path', async () => {
      for (const literal of ['1e3', '1.0', '1E2', '10e-1', '-0.0']) {
        assertError(
          await post(`{"name":"Exp","categoryId":${literal}}`),
          400,
          'invalid_request',
          /categoryId must be an int64 integer .* plain decimal/,
        )
      }
      assertError(await t.app.inject({ url: '/v1/pets?limit=005', headers: auth }), 400, 'invalid_request', /limit .* plain decimal/)
      assertError(await t.app.inject({ url: '/v1/pets/007', headers: auth }), 400, 'invalid_request', /petId .* plain decimal/)
      assertError(await t.app.inject({ url: '/v1/pets?after=01', headers: auth }), 400, 'invalid_request', /after/)
      assert.equal((await post('{"name":"Zero","categoryId":0}')).statusCode, 201)
      assert.equal((await t.app.inject({ url: '/v1/pets?limit=10', headers: auth })).statusCode, 200)
    })

    test('zero has one spelling: -0 is 400 in a body, a query and a path, and nothing is stored', async () => {
      const before = (await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length
      assertError(
        await post('{"name":"Minus zero","categoryId":-0}'),
        400,
        'invalid_request',
        /^categoryId must be an int64 integer .* written in plain decimal$/,
      )
      assert.equal((await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length, before)
      assertError(await t.app.inject({ url: '/v1/pets?after=-0', headers: auth }), 400, 'invalid_request', /after .* plain decimal/)
      assertError(await t.app.inject({ url: '/v1/pets/-0', headers: auth }), 400, 'invalid_request', /petId .* plain decimal/)
      assert.equal((await post('{"name":"Minus one","categoryId":-1}')).json().categoryId, -1)
    })

    test('a name of only white space is 400; other names are stored exactly as sent', async () => {
      for (const name of [' ', '   ', '\t\n', '\u00a0\u2003']) {
        assertError(await post({ name, categoryId: 1 }), 400, 'invalid_request', /name must not be only white space/)
      }
      const padded = await post({ name: '  Rex ', categoryId: 1 })
      assert.equal(padded.statusCode, 201)
      assert.equal(padded.json().name, '  Rex ')
    })

    test('every problem of a body is reported in one answer, in plain words', async () => {
      const body = assertError(await post({ categoryId: 'x', status: 'bad' }), 400, 'invalid_request')
      assert.match(body.message, /^3 problems: /)
      assert.match(body.message, /name is required/)
      assert.match(body.message, /categoryId must be an int64 integer/)
      assert.match(body.message, /status must be one of available, pending, sold/)
      assert.doesNotMatch(body.message, /must NOT|must have/, 'no validator jargon')
      assertError(await post({ name: '', categoryId: 1 }), 400, 'invalid_request', /^name must not be empty$/)
      assertError(
        await post({ name: 'x'.repeat(201), categoryId: 1 }),
        400,
        'invalid_request',
        /^name must be at most 200 characters long$/,
      )
    })

    test('a charset other than UTF-8 is 415 naming the charset', async () => {
      assertError(
        await post('{"name":"x","categoryId":1}', { 'content-type': 'application/json; charset=latin1' }),
        415,
        'unsupported_media_type',
        /charset "latin1" is not supported/,
      )
    })

    test('missing, empty or mistyped fields are 400 naming the field', async () => {
      assertError(await post({ categoryId: 1 }), 400, 'invalid_request', /name is required/)
      assertError(await post({ name: 'x' }), 400, 'invalid_request', /categoryId is required/)
      assertError(await post({ name: '', categoryId: 1 }), 400, 'invalid_request', /name/)
      assertError(await post({ name: 5, categoryId: 1 }), 400, 'invalid_request', /name/)
      assertError(await post({ name: 'x'.repeat(201), categoryId: 1 }), 400, 'invalid_request', /name/)
      assertError(
        await post({ name: 'x', categoryId: 1, status: 'lost' }),
        400,
        'invalid_request',
        /status must be one of available, pending, sold/,
      )
      assertError(await post({ name: 'x', categoryId: 1, status: null }), 400, 'invalid_request', /status/)
    })

    test('a client-sent id and unknown fields are rejected, not stripped', async () => {
      assertError(await post({ id: 5, name: 'x', categoryId: 1 }), 400, 'invalid_request', /id is assigned by the service/)
      assertError(await post({ name: 'x', categoryId: 1, color: 'red' }), 400, 'invalid_request', /unknown field 'color'/)
      assertError(await post('{"name":"x","categoryId":1,"__proto__":{"admin":true}}'), 400, 'invalid_request', /__proto__/)
    })

    test('malformed, truncated, empty, non-object and duplicate-key bodies are 400', async () => {
      assertError(await post('{"name":"x",'), 400, 'invalid_request', /not valid JSON/)
      assertError(await post('{"name":"x" "categoryId":1}'), 400, 'invalid_request', /not valid JSON/)
      assertError(await post(''), 400, 'invalid_request', /empty/)
      assertError(await post('[]'), 400, 'invalid_request', /body must be a JSON object/)
      assertError(await post('null'), 400, 'invalid_request', /body/)
      assertError(await post('"text"'), 400, 'invalid_request', /body/)
      assertError(await post('{"name":"a","name":"b","categoryId":1}'), 400, 'invalid_request', /Duplicate key/)
      assertError(await post('['.repeat(8000)), 400, 'invalid_request')
      assertError(
        await post(Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
        400,
        'invalid_request',
        /UTF-8/,
      )
    })

    test('a wrong Content-Type is 415 and a body over 16 KiB is 413', async () => {
      assertError(await post('name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type')
      assertError(await post('{}', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type')
      assertError(
        await post('{"name":"x","categoryId":1}', { 'content-type': 'application/json; charset=latin1' }),
        415,
        'unsupported_media_type',
      )
      const ok = await post('{"name":"x","categoryId":1}', { 'content-type': 'application/json; charset=utf-8' })
      assert.equal(ok.statusCode, 201)
      assertError(await post(JSON.stringify({ name: 'x'.repeat(17 * 1024), categoryId: 1 })), 413, 'payload_too_large')
    })

    test('no body at all is 400', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/pets', headers: auth })
      assertError(res, 400, 'invalid_request', /body/)
    })

    test('nothing half-written: a rejected body creates no pet', async () => {
      const before = (await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length
      await post({ name: 'x', categoryId: 'nope' })
      await post('{"name":"x","categoryId":1')
      const afterCount = (await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length
      assert.equal(afterCount, before)
    })
  })

  describe('listPets', () => {
    let key: Record<string, string>
    const fresh = buildSuiteApp()
    before(async () => {
      key = bearer(await fresh.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
      const statuses = ['available', 'pending', 'sold', undefined]
      for (let i = 0; i < 130; i++) {
        const status = statuses[i % 4]
        await fresh.app.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...key, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: `pet${i}`, categoryId: i, ...(status ? { status } : {}) }),
        })
      }
    })
    const list = (qs: string) => fresh.app.inject({ url: `/v1/pets${qs}`, headers: key })

    test('default limit 20, ascending id order, bare array', async () => {
      const res = await list('')
      assert.equal(res.statusCode, 200)
      const pets = res.json()
      assert.ok(Array.isArray(pets))
      assert.equal(pets.length, 20)
      for (let i = 1; i < pets.length; i++) assert.ok(pets[i].id > pets[i - 1].id)
    })

    test('limit 1 and 100 are honoured', async () => {
      assert.equal((await list('?limit=1')).json().length, 1)
      assert.equal((await list('?limit=100')).json().length, 100)
    })

    test('out-of-range or malformed limit is 400, never clamped', async () => {
      for (const bad of ['0', '101', '-1', 'abc', '1.5', '1e1', '', '0x10', '%2010', '20&limit=30']) {
        assertError(await list(`?limit=${bad}`), 400, 'invalid_request', /limit/)
      }
    })

    test('status filter returns only that status; a bad status is 400', async () => {
      for (const status of ['available', 'pending', 'sold']) {
        const pets = (await list(`?status=${status}&limit=100`)).json()
        assert.equal(pets.length, status === 'available' ? 33 : 33 - (status === 'sold' ? 1 : 0))
        assert.ok(pets.every((p: { status: string }) => p.status === status))
      }
      assertError(await list('?status=lost'), 400, 'invalid_request', /status must be one of/)
      assertError(await list('?status='), 400, 'invalid_request', /status/)
    })

    test('unknown query parameters are 400', async () => {
      assertError(await list('?limt=5'), 400, 'invalid_request', /unknown query parameter 'limt'/)
    })

    test('Link rel="next" walks the whole catalogue exactly once, keeping the filter', async () => {
      const seen: number[] = []
      let url: string | undefined = '/v1/pets?limit=7'
      let pages = 0
      while (url) {
        const res: Awaited<ReturnType<typeof fresh.app.inject>> = await fresh.app.inject({ url, headers: key })
        assert.equal(res.statusCode, 200)
        seen.push(...res.json().map((p: { id: number }) => p.id))
        const link = res.headers.link as string | undefined
        // A relative reference (RFC 8288), resolved against the request's URL as a client would.
        const next: URL | undefined = link ? new URL(/<([^>]+)>; rel="next"/.exec(link)![1]!, `http://localhost${url}`) : undefined
        url = next ? next.pathname + next.search : undefined
        pages++
      }
      assert.equal(seen.length, 130)
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => a - b),
      )
      assert.equal(new Set(seen).size, 130)
      assert.equal(pages, Math.ceil(130 / 7))

      const res = await list('?limit=5&status=sold')
      assert.match(res.headers.link as string, /^<\/v1\/pets\?limit=5&status=sold&after=\d+>; rel="next"$/)
    })

    test('no Link header when the page is the last one', async () => {
      const res = await list('?limit=100&status=pending')
      assert.equal(res.headers.link, undefined)
    })

    test('a repeated page answers the same bytes (served from the page cache); a create shows on the last page at once', async (context) => {
      const app = await buildTestApp(context)
      const auth = bearer(await app.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
      const create = (name: string) =>
        app.app.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...auth, 'content-type': 'application/json' },
          payload: JSON.stringify({ name, categoryId: 1 }),
        })
      for (let i = 0; i < 3; i++) assert.equal((await create(`p${i}`)).statusCode, 201)
      const get = (qs: string) => app.app.inject({ url: `/v1/pets${qs}`, headers: auth })
      const full = [await get('?limit=2'), await get('?limit=2')]
      for (const res of full) {
        assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
        assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)))
        assert.match(res.headers.link as string, /after=\d+>; rel="next"$/)
      }
      assert.equal(full[0]!.body, full[1]!.body)
      assert.equal(full[1]!.json().length, 2)
      assert.deepEqual(
        (await get('?limit=10')).json().map((p: { name: string }) => p.name),
        ['p0', 'p1', 'p2'],
      )
      assert.equal((await create('p3')).statusCode, 201)
      const tail = await get('?limit=10')
      assert.deepEqual(
        tail.json().map((p: { name: string }) => p.name),
        ['p0', 'p1', 'p2', 'p3'],
      )
      assert.equal(tail.headers.link, undefined)
      assert.equal(
        (await app.app.inject({ method: 'HEAD', url: '/v1/pets?limit=10', headers: auth })).headers['content-length'],
        tail.headers['content-length'],
      )
    })

    test('after is validated like every parameter', async () => {
      assertError(await list('?after=-1'), 400, 'invalid_request', /after/)
      assertError(await list('?after=x'), 400, 'invalid_request', /after/)
      assert.equal((await list('?after=9223372036854775807')).json().length, 0)
    })
  })

  describe('getPet (deprecated)', () => {
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

  test('links are relative by default and never built from the Host header; PUBLIC_BASE_URL makes them absolute', async (context) => {
    const host = { host: 'attacker.example' }
    const relative = await t.app.inject({ url: '/v1/pets/1', headers: { ...auth, ...host } })
    assert.match(relative.headers.link as string, /^<\/v1\/pets>; rel="successor-version", <\/docs#\/pets\/getPet>; rel="deprecation"/)
    const absolute = await buildTestApp(context, { env: { PUBLIC_BASE_URL: 'https://api.example.com' } })
    const key = { authorization: `Bearer ${await absolute.key()}`, ...host }
    for (let i = 0; i < 3; i++)
      await absolute.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...key, 'content-type': 'application/json' },
        payload: '{"name":"A","categoryId":1}',
      })
    const page = await absolute.app.inject({ url: '/v1/pets?limit=2', headers: key })
    assert.match(page.headers.link as string, /^<https:\/\/api\.example\.com\/v1\/pets\?limit=2&after=\d+>; rel="next"$/)
    const got = await absolute.app.inject({ url: '/v1/pets/1', headers: key })
    assert.match(got.headers.link as string, /^<https:\/\/api\.example\.com\/v1\/pets>; rel="successor-version"/)
    assert.doesNotMatch(String(page.headers.link) + String(got.headers.link), /attacker/)
  })
})
