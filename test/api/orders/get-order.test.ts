/**
 * GET /v1/store/orders/{orderId} (getOrder, api/orders/get.ts) through app.inject: whose orders a caller sees, on every operation.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { bearer } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { storeSuite } from '../../helpers/store-suite.js'

const CLI = { actor: { type: 'cli' as const, id: 'tester' } }

describe('getOrder', () => {
  const store = storeSuite()
  const { send, newPet, place } = store

  test("a caller sees its own orders only: another key's order is 404 everywhere; the successor of a rotated store.key sees them", async () => {
    const mine = await store.t.domain.services.keys.createKey({ plan: 'enterprise', name: 'mine', perMinute: 10_000, perDay: 100_000 }, CLI)
    const other = bearer(await store.t.key({ plan: 'pro', name: 'other' }))
    const order = (await place(await newPet('available'), bearer(mine.key))).json()
    assertError(await send('GET', `/v1/store/orders/${order.id}`, undefined, other), 404, 'not_found')
    assertError(await send('POST', `/v1/store/orders/${order.id}/cancel`, undefined, other), 404, 'not_found')
    assertError(await send('POST', `/v1/store/orders/${order.id}/complete`, undefined, other), 404, 'not_found')
    assert.deepEqual((await send('GET', '/v1/store/orders', undefined, other)).json(), [])
    const rotated = await store.t.domain.services.keys.rotateKey(mine.view.id, { graceSeconds: 60 }, CLI)
    const listed = (await send('GET', '/v1/store/orders', undefined, bearer(rotated.key))).json()
    assert.deepEqual(
      listed.map((o: { id: number }) => o.id),
      [order.id],
    )
    assert.equal((await send('POST', `/v1/store/orders/${order.id}/complete`, undefined, bearer(rotated.key))).statusCode, 200)
    assert.equal((await send('GET', `/v1/store/orders/${order.id}`)).statusCode, 404, 'nor does the first test key')
  })
})
