/**
 * GET /v1/store/orders (listOrders, api/orders/list.ts) through app.inject: the caller's orders, paged.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { bearer } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { storeSuite } from '../../helpers/store-suite.js'

describe('listOrders', () => {
  const store = storeSuite()
  const { send, newPet, place } = store

  test('the list: a bare array, limit, status filter, keyset paging with Link rel="next" keeping the filter', async () => {
    const caller = bearer(await store.t.key({ plan: 'enterprise', name: 'lister', perMinute: 10_000, perDay: 100_000 }))
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
})
