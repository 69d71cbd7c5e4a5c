/**
 * The store through HTTP (app.inject): what each operation answers, its errors, paging, whose
 * orders a caller sees, the rate limits, and Idempotency-Key on POST /v1/store/orders.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import type { ManualClock } from '../../src/shared/clock.js'
import { bearer, openTestApp, TEST_NOW, type TestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

type Headers = Record<string, string>
const JSON_TYPE = { 'content-type': 'application/json' }
const CLI = { actor: { type: 'cli' as const, id: 'tester' } }

describe('the store over HTTP', () => {
  let t: TestApp
  let key: Headers
  before(async () => {
    t = await openTestApp()
    key = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })
  after(() => t.close())

  const send = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Headers = key) =>
    t.app.inject({ method, url, headers: payload === undefined ? headers : { ...headers, ...JSON_TYPE }, payload: payload as string })
  const newPet = async (status?: string): Promise<number> =>
    (await send('POST', '/v1/pets', { name: 'Rex', categoryId: 7, ...(status ? { status } : {}) })).json().id
  const place = (petId: unknown, headers: Headers = key) => send('POST', '/v1/store/orders', { petId }, headers)
  const inventory = async () => (await send('GET', '/v1/store/inventory')).json()

  test('an order for an available animal: 201 with Location, the animal pending, the inventory moved', async () => {
    const before = await inventory()
    const petId = await newPet('available')
    const res = await place(petId)
    assert.equal(res.statusCode, 201, res.body)
    const order = res.json()
    assert.equal(res.headers.location, `/v1/store/orders/${order.id}`)
    assert.deepEqual(order, {
      id: order.id,
      petId,
      status: 'placed',
      createdAt: new Date(TEST_NOW).toISOString(),
      expiresAt: new Date(TEST_NOW + 30 * 60_000).toISOString(),
    })
    assert.equal((await send('GET', `/v1/pets/${petId}`)).json().status, 'pending')
    assert.deepEqual(await inventory(), { ...before, pending: before.pending + 1 })
    const got = await send('GET', res.headers.location as string)
    assert.equal(got.statusCode, 200)
    assert.equal(got.body, res.body)
  })

  test('refusals: 409 pet_not_available naming the status, 422 unknown_pet naming petId, 400 for a bad body', async () => {
    const petId = await newPet('available')
    assert.equal((await place(petId)).statusCode, 201)
    assertError(await place(petId), 409, 'pet_not_available', /is not available: it is pending/)
    assertError(await place(await newPet('sold')), 409, 'pet_not_available', /it is sold/)
    assertError(await place(await newPet()), 409, 'pet_not_available', /not for sale: it has no status/)
    assertError(await place(987_654_321), 422, 'unknown_pet', /petId 987654321/)
    assertError(await place('9223372036854775807'), 400, 'invalid_request', /petId/)
    assertError(await place(1.5), 400, 'invalid_request', /petId/)
    assertError(await place(9_223_372_036_854_775_808n.toString() as unknown as number), 400, 'invalid_request', /petId/)
    assertError(await send('POST', '/v1/store/orders', { petId, quantity: 1 }), 400, 'invalid_request', /quantity/)
    assertError(await send('POST', '/v1/store/orders', {}), 400, 'invalid_request', /petId/)
    assertError(
      await t.app.inject({ method: 'POST', url: '/v1/store/orders', headers: { ...key, 'content-type': 'text/plain' }, payload: 'x' }),
      415,
      'unsupported_media_type',
    )
  })

  test('cancel: the animal available again; complete: sold; a finished order is 409 order_not_placed naming its status', async () => {
    const [a, b] = [await newPet('available'), await newPet('available')]
    const oa = (await place(a)).json()
    const ob = (await place(b)).json()
    const cancelled = await send('POST', `/v1/store/orders/${oa.id}/cancel`)
    assert.equal(cancelled.statusCode, 200, cancelled.body)
    assert.deepEqual(cancelled.json(), { ...oa, status: 'cancelled', endedAt: new Date(TEST_NOW).toISOString() })
    const completed = await send('POST', `/v1/store/orders/${ob.id}/complete`, {})
    assert.equal(completed.statusCode, 200, completed.body)
    assert.equal(completed.json().status, 'completed')
    assert.deepEqual(
      [(await send('GET', `/v1/pets/${a}`)).json().status, (await send('GET', `/v1/pets/${b}`)).json().status],
      ['available', 'sold'],
    )
    assertError(await send('POST', `/v1/store/orders/${oa.id}/complete`), 409, 'order_not_placed', /cannot be completed: it is cancelled/)
    assertError(await send('POST', `/v1/store/orders/${ob.id}/cancel`), 409, 'order_not_placed', /cannot be cancelled: it is completed/)
    assertError(await send('POST', `/v1/store/orders/${oa.id}/cancel`, { reason: 'x' }), 400, 'invalid_request', /body/)
    assertError(await send('POST', '/v1/store/orders/99999/cancel'), 404, 'not_found', /99999/)
    assertError(await send('POST', '/v1/store/orders/abc/cancel'), 400, 'invalid_request', /orderId/)
    assertError(await send('GET', `/v1/store/orders/${oa.id}/cancel`), 405, 'method_not_allowed')
  })

  test("a caller sees its own orders only: another key's order is 404 everywhere; the successor of a rotated key sees them", async () => {
    const mine = await t.domain.services.keys.createKey({ plan: 'enterprise', name: 'mine', perMinute: 10_000, perDay: 100_000 }, CLI)
    const other = bearer(await t.key({ plan: 'pro', name: 'other' }))
    const order = (await place(await newPet('available'), bearer(mine.key))).json()
    assertError(await send('GET', `/v1/store/orders/${order.id}`, undefined, other), 404, 'not_found')
    assertError(await send('POST', `/v1/store/orders/${order.id}/cancel`, undefined, other), 404, 'not_found')
    assertError(await send('POST', `/v1/store/orders/${order.id}/complete`, undefined, other), 404, 'not_found')
    assert.deepEqual((await send('GET', '/v1/store/orders', undefined, other)).json(), [])
    const rotated = await t.domain.services.keys.rotateKey(mine.view.id, { graceSeconds: 60 }, CLI)
    const listed = (await send('GET', '/v1/store/orders', undefined, bearer(rotated.key))).json()
    assert.deepEqual(
      listed.map((o: { id: number }) => o.id),
      [order.id],
    )
    assert.equal((await send('POST', `/v1/store/orders/${order.id}/complete`, undefined, bearer(rotated.key))).statusCode, 200)
    assert.equal((await send('GET', `/v1/store/orders/${order.id}`)).statusCode, 404, 'nor does the first test key')
  })

  test('the list: a bare array, limit, status filter, keyset paging with Link rel="next" keeping the filter', async () => {
    const caller = bearer(await t.key({ plan: 'enterprise', name: 'lister', perMinute: 10_000, perDay: 100_000 }))
    const ids: number[] = []
    for (let i = 0; i < 5; i++) ids.push((await place(await newPet('available'), caller)).json().id)
    await send('POST', `/v1/store/orders/${ids[1]}/cancel`, undefined, caller)
    const first = await send('GET', '/v1/store/orders?limit=2', undefined, caller)
    assert.deepEqual(
      first.json().map((o: { id: number }) => o.id),
      ids.slice(0, 2),
    )
    assert.equal(first.headers.link, `</v1/store/orders?limit=2&after=${ids[1]}>; rel="next"`)
    const next = await send('GET', `/v1/store/orders?limit=2&after=${ids[1]}`, undefined, caller)
    assert.deepEqual(
      next.json().map((o: { id: number }) => o.id),
      ids.slice(2, 4),
    )
    const placed = await send('GET', '/v1/store/orders?status=placed&limit=3', undefined, caller)
    assert.deepEqual(
      placed.json().map((o: { id: number }) => o.id),
      [ids[0], ids[2], ids[3]],
    )
    assert.equal(placed.headers.link, `</v1/store/orders?limit=3&status=placed&after=${ids[3]}>; rel="next"`)
    const last = await send('GET', `/v1/store/orders?status=placed&limit=3&after=${ids[3]}`, undefined, caller)
    assert.deepEqual(
      last.json().map((o: { id: number }) => o.id),
      [ids[4]],
    )
    assert.equal(last.headers.link, undefined)
    assert.equal((await send('GET', '/v1/store/orders', undefined, caller)).json().length, 5, 'default limit 20')
    for (const bad of ['limit=0', 'limit=101', 'status=sold', 'after=-1', 'after=x', 'limt=5'])
      assertError(await send('GET', `/v1/store/orders?${bad}`, undefined, caller), 400, 'invalid_request')
  })

  test('Idempotency-Key: a retry replays the first answer (even after the order changed); another body or a key of a pet create is 422', async () => {
    const caller = { ...bearer(await t.key({ plan: 'enterprise', name: 'idem', perMinute: 10_000, perDay: 100_000 })) }
    const petId = await newPet('available')
    const withKey = (value: string, body: unknown) =>
      send('POST', '/v1/store/orders', body, { ...caller, 'idempotency-key': value }) as Promise<LightMyRequestResponse>
    const first = await withKey('order-1', { petId })
    assert.equal(first.statusCode, 201)
    assert.equal((await send('POST', `${first.headers.location}/complete`, undefined, caller)).statusCode, 200)
    const retry = await withKey('"order-1"', { petId })
    assert.equal(retry.statusCode, 201)
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal(retry.headers.location, first.headers.location)
    assert.equal(retry.body, first.body, 'the first answer, byte for byte')
    assertError(await withKey('order-1', { petId: await newPet('available') }), 422, 'idempotency_key_reused')
    const created = await send(
      'POST',
      '/v1/pets',
      { name: 'Keyed', categoryId: 1, status: 'available' },
      { ...caller, 'idempotency-key': 'pet-1' },
    )
    assert.equal(created.statusCode, 201)
    assertError(await withKey('pet-1', { petId: created.json().id }), 422, 'idempotency_key_reused', /operation/)
    assertError(await withKey('two words', { petId }), 400, 'invalid_request', /Idempotency-Key/)
    // A refusal records nothing: the same key works once the animal can be ordered.
    const later = await newPet('sold')
    assertError(await withKey('order-2', { petId: later }), 409, 'pet_not_available')
    assert.equal((await withKey('order-2', { petId: created.json().id })).statusCode, 201)
  })

  test('the hold: a complete after ORDER_HOLD_MINUTES is 409 at once (the sweep has not run); the sweep frees the rest', async () => {
    const app = await openTestApp({ env: { ORDER_HOLD_MINUTES: '5', ORDER_SWEEP_MS: '600000' } })
    try {
      const k = bearer(await app.key({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 }))
      const req = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
        app.app.inject({ method, url, headers: payload === undefined ? k : { ...k, ...JSON_TYPE }, payload: payload as string })
      const pets = [] as number[]
      for (let i = 0; i < 3; i++) pets.push((await req('POST', '/v1/pets', { name: 'Rex', categoryId: 1, status: 'available' })).json().id)
      const orders = [] as Array<{ id: number; expiresAt: string }>
      for (const petId of pets) orders.push((await req('POST', '/v1/store/orders', { petId })).json())
      assert.equal(orders[0]!.expiresAt, new Date(TEST_NOW + 5 * 60_000).toISOString())
      ;(app.clock as ManualClock).advance(5 * 60_000)
      assertError(await req('POST', `/v1/store/orders/${orders[0]!.id}/complete`), 409, 'order_not_placed', /it is expired/)
      assert.equal((await req('GET', `/v1/pets/${pets[0]}`)).json().status, 'available')
      assert.equal((await req('GET', `/v1/store/orders/${orders[1]!.id}`)).json().status, 'placed', 'reads wait for the sweep')
      assert.deepEqual((await req('GET', '/v1/store/inventory')).json(), { available: 1, pending: 2, sold: 0 })
      assert.equal(await app.domain.jobs.orderExpiry.run(), 2)
      assert.deepEqual((await req('GET', '/v1/store/inventory')).json(), { available: 3, pending: 0, sold: 0 })
      const expired = (await req('GET', `/v1/store/orders/${orders[1]!.id}`)).json()
      assert.deepEqual([expired.status, expired.endedAt], ['expired', new Date(TEST_NOW + 5 * 60_000).toISOString()])
    } finally {
      await app.close()
    }
  })

  test('every store operation needs a key and is counted by the rate limits', async () => {
    const free = bearer(await t.key({ plan: 'free', name: 'counted' }))
    const petId = await newPet('available')
    const answers = [
      await send('GET', '/v1/store/inventory', undefined, free),
      await send('GET', '/v1/store/orders', undefined, free),
      await place(petId, free),
    ]
    const id = answers[2]!.json().id
    answers.push(await send('GET', `/v1/store/orders/${id}`, undefined, free))
    answers.push(await send('POST', `/v1/store/orders/${id}/cancel`, undefined, free))
    answers.push(await send('POST', `/v1/store/orders/${id}/complete`, undefined, free))
    assert.deepEqual(
      answers.map((r) => r.headers['x-ratelimit-remaining']),
      ['59', '58', '57', '56', '55', '54'],
    )
    for (const url of ['/v1/store/inventory', '/v1/store/orders', `/v1/store/orders/${id}`])
      assertError(await t.app.inject({ url }), 401, 'unauthorized')
    assertError(await t.app.inject({ method: 'POST', url: `/v1/store/orders/${id}/cancel` }), 401, 'unauthorized')
  })
})
