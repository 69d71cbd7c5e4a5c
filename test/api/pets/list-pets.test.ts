/** GET /v1/pets (listPets, api/pets/list.ts) through app.inject: the page, its filter and limit, the Link header, the page cache. */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { bearer, buildSuiteApp, buildTestApp } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'

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
