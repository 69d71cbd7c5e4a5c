/**
 * GET /v1/store/orders/{orderId} (getOrder, api/orders/get.ts) through app.inject: whose orders a caller sees, on every operation.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { bearer, openTestApp, type TestApp } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'

type Headers = Record<string, string>
const JSON_TYPE = { 'content-type': 'application/json' }
const CLI = { actor: { type: 'cli' as const, id: 'tester' } }

describe('getOrder', () => {
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
})
