/**
 * POST /v1/store/orders/{orderId}/complete (completeOrder, api/orders/complete.ts) through app.inject, and the hold it may find ran out.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ManualClock } from '../../../src/shared/clock.js'
import { bearer, openTestApp, TEST_NOW } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { storeSuite } from '../../helpers/store-suite.js'

describe('completeOrder', () => {
  const store = storeSuite()
  const { send, newPet, place } = store

  test('complete: the animal sold; a finished order is 409 order_not_placed naming its status', async () => {
    const [a, b] = [await newPet('available'), await newPet('available')]
    const oa = (await place(a)).json()
    const ob = (await place(b)).json()
    const completed = await send('POST', `/v1/store/orders/${ob.id}/complete`, {})
    assert.equal(completed.statusCode, 200, completed.body)
    assert.equal(completed.json().status, 'completed')
    assert.equal((await send('GET', `/v1/pets/${b}`)).json().status, 'sold')
    assert.equal((await send('POST', `/v1/store/orders/${oa.id}/cancel`)).statusCode, 200)
    assertError(await send('POST', `/v1/store/orders/${oa.id}/complete`), 409, 'order_not_placed', /cannot be completed: it is cancelled/)
  })

  test('the hold: a complete after ORDER_HOLD_MINUTES is 409 at once (the sweep has not run); the sweep frees the rest', async () => {
    const app = await openTestApp({ env: { ORDER_HOLD_MINUTES: '5', ORDER_SWEEP_MS: '600000' } })
    try {
      const k = bearer(await app.key({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 }))
      const req = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
        app.app.inject({
          method,
          url,
          headers: payload === undefined ? k : { ...k, 'content-type': 'application/json' },
          payload: payload as string,
        })
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
})
