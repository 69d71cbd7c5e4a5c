/**
 * POST /v1/store/orders/{orderId}/cancel (cancelOrder, api/orders/cancel.ts) through app.inject.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { TEST_NOW } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { storeSuite } from '../../helpers/store-suite.js'

describe('cancelOrder', () => {
  const store = storeSuite()
  const { send, newPet, place } = store

  test('cancel: the animal available again; a finished order is 409 order_not_placed naming its status', async () => {
    const [a, b] = [await newPet('available'), await newPet('available')]
    const oa = (await place(a)).json()
    const ob = (await place(b)).json()
    const cancelled = await send('POST', `/v1/store/orders/${oa.id}/cancel`)
    assert.equal(cancelled.statusCode, 200, cancelled.body)
    assert.deepEqual(cancelled.json(), { ...oa, status: 'cancelled', endedAt: new Date(TEST_NOW).toISOString() })
    assert.equal((await send('GET', `/v1/pets/${a}`)).json().status, 'available')
    assert.equal((await send('POST', `/v1/store/orders/${ob.id}/complete`, {})).statusCode, 200)
    assertError(await send('POST', `/v1/store/orders/${ob.id}/cancel`), 409, 'order_not_placed', /cannot be cancelled: it is completed/)
    assertError(await send('POST', `/v1/store/orders/${oa.id}/cancel`, { reason: 'x' }), 400, 'invalid_request', /body/)
    assertError(await send('POST', '/v1/store/orders/99999/cancel'), 404, 'not_found', /99999/)
    assertError(await send('POST', '/v1/store/orders/abc/cancel'), 400, 'invalid_request', /orderId/)
    assertError(await send('GET', `/v1/store/orders/${oa.id}/cancel`), 405, 'method_not_allowed')
  })
})
