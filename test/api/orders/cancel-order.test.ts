/**
 * POST /v1/store/orders/{orderId}/cancel (cancelOrder, api/orders/cancel.ts) through app.inject.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { bearer, openTestApp, TEST_NOW, type TestApp } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'

type Headers = Record<string, string>
const JSON_TYPE = { 'content-type': 'application/json' }

describe('cancelOrder', () => {
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
