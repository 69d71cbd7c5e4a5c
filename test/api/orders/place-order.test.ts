/**
 * POST /v1/store/orders (placeOrder, api/orders/place.ts) through app.inject: the order, its refusals, and its Idempotency-Key.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { bearer, TEST_NOW } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { storeSuite } from '../../helpers/store-suite.js'

describe('placeOrder', () => {
  const store = storeSuite()
  const { send, newPet, place } = store
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
      await store.t.app.inject({
        method: 'POST',
        url: '/v1/store/orders',
        headers: { ...store.key, 'content-type': 'text/plain' },
        payload: 'x',
      }),
      415,
      'unsupported_media_type',
    )
  })

  test('Idempotency-Key: a retry replays the first answer (even after the order changed); another body or a store.key of a pet create is 422', async () => {
    const caller = { ...bearer(await store.t.key({ plan: 'enterprise', name: 'idem', perMinute: 10_000, perDay: 100_000 })) }
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
    // A refusal records nothing: the same store.key works once the animal can be ordered.
    const later = await newPet('sold')
    assertError(await withKey('order-2', { petId: later }), 409, 'pet_not_available')
    assert.equal((await withKey('order-2', { petId: created.json().id })).statusCode, 201)
  })
})
