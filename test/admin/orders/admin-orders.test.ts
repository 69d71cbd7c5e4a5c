/**
 * The admin API's orders resource through app.inject: a page of every caller's orders filtered
 * by status and placing key, paged; one order; cancelling any placed order (its animal available
 * again, on the audit log with the admin token as actor); and /v1 owners still see only theirs.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { InjectOptions } from 'fastify'
import { bearer } from '../../helpers/app.js'
import { buildAdminSuiteApp } from '../helpers.js'

describe('admin orders', () => {
  const t = buildAdminSuiteApp()
  const v1 = (key: string, method: InjectOptions['method'], url: string, body?: object) =>
    t.api.inject({ method, url, headers: { ...bearer(key), ...(body ? { 'content-type': 'application/json' } : {}) }, payload: body })
  async function newKey(name: string): Promise<{ key: string; id: string }> {
    const res = await t.call('POST', '/admin/v1/keys', { plan: 'enterprise', name, perMinute: 100_000, perDay: 1_000_000 })
    assert.equal(res.statusCode, 201, res.body)
    return { key: res.json().key, id: res.json().apiKey.id }
  }
  async function placeOrder(key: string): Promise<{ id: number; petId: number }> {
    const pet = await v1(key, 'POST', '/v1/pets', { name: 'Rex', categoryId: 1, status: 'available' })
    assert.equal(pet.statusCode, 201, pet.body)
    const order = await v1(key, 'POST', '/v1/store/orders', { petId: pet.json().id })
    assert.equal(order.statusCode, 201, order.body)
    return { id: order.json().id, petId: pet.json().id }
  }

  test('list, filters, paging, get, cancel, 409s, 404, audit, /v1 unchanged', async () => {
    const alice = await newKey('alice')
    const bob = await newKey('bob')
    const a1 = await placeOrder(alice.key)
    const a2 = await placeOrder(alice.key)
    const b1 = await placeOrder(bob.key)
    assert.equal((await v1(alice.key, 'POST', `/v1/store/orders/${a2.id}/complete`)).statusCode, 200)

    const all = await t.call('GET', '/admin/v1/orders')
    assert.equal(all.statusCode, 200, all.body)
    assert.deepEqual(
      all.json().data.map((o: { id: number }) => o.id),
      [a1.id, a2.id, b1.id],
    )
    const first = all.json().data[0]
    assert.equal(first.keyId, alice.id)
    assert.equal(first.status, 'placed')
    assert.equal(first.endedAt, null)
    assert.equal(typeof first.owner, 'string')
    assert.equal(all.json().nextAfter, null)

    const byKey = await t.call('GET', `/admin/v1/orders?keyId=${bob.id}`)
    assert.deepEqual(
      byKey.json().data.map((o: { id: number }) => o.id),
      [b1.id],
    )
    const byStatus = await t.call('GET', '/admin/v1/orders?status=completed')
    assert.deepEqual(
      byStatus.json().data.map((o: { id: number }) => o.id),
      [a2.id],
    )
    const unknownKey = await t.call('GET', '/admin/v1/orders?keyId=key_AAAAAAAAAAAAAAAA')
    assert.deepEqual(unknownKey.json(), { data: [], nextAfter: null })
    assert.equal((await t.call('GET', '/admin/v1/orders?status=lost')).statusCode, 400)

    const page1 = await t.call('GET', '/admin/v1/orders?limit=2')
    assert.equal(page1.json().data.length, 2)
    assert.equal(page1.json().nextAfter, String(a2.id))
    assert.equal(page1.headers.link, `</admin/v1/orders?limit=2&after=${a2.id}>; rel="next"`)
    const page2 = await t.call('GET', `/admin/v1/orders?limit=2&after=${a2.id}`)
    assert.deepEqual(
      page2.json().data.map((o: { id: number }) => o.id),
      [b1.id],
    )
    assert.equal(page2.headers.link, undefined)

    const one = await t.call('GET', `/admin/v1/orders/${b1.id}`)
    assert.equal(one.statusCode, 200)
    assert.equal(one.json().keyId, bob.id)
    assert.equal((await t.call('GET', '/admin/v1/orders/999999')).json().code, 'not_found')

    // /v1 unchanged: alice cannot see bob's order.
    assert.equal((await v1(alice.key, 'GET', `/v1/store/orders/${b1.id}`)).statusCode, 404)

    const before = (await v1(alice.key, 'GET', '/v1/store/inventory')).json()
    const cancelled = await t.call('POST', `/admin/v1/orders/${b1.id}/cancel`)
    assert.equal(cancelled.statusCode, 200, cancelled.body)
    assert.equal(cancelled.json().status, 'cancelled')
    assert.equal(typeof cancelled.json().endedAt, 'string')
    const pet = await v1(alice.key, 'GET', `/v1/pets/${b1.petId}`)
    assert.equal(pet.json().status, 'available')
    const afterInventory = (await v1(alice.key, 'GET', '/v1/store/inventory')).json()
    assert.equal(afterInventory.available, before.available + 1)
    assert.equal(afterInventory.pending, before.pending - 1)
    assert.equal((await v1(bob.key, 'GET', `/v1/store/orders/${b1.id}`)).json().status, 'cancelled')

    const again = await t.call('POST', `/admin/v1/orders/${b1.id}/cancel`, {})
    assert.equal(again.statusCode, 409)
    assert.equal(again.json().code, 'order_not_placed')
    const completed = await t.call('POST', `/admin/v1/orders/${a2.id}/cancel`)
    assert.equal(completed.statusCode, 409)
    assert.match(completed.json().message, /completed/)
    assert.equal((await t.call('POST', '/admin/v1/orders/999999/cancel')).statusCode, 404)
    assert.equal((await t.call('POST', `/admin/v1/orders/${a1.id}/cancel`, { reason: 'x' })).statusCode, 400)

    const audit = await t.call('GET', `/admin/v1/audit-log?keyId=${bob.id}&kind=change`)
    assert.equal(audit.statusCode, 200, audit.body)
    const entries = audit.json().data.filter((e: { action: string }) => e.action === 'order.cancel')
    assert.equal(entries.length, 1)
    assert.equal(entries[0].actor.type, 'admin_token')
    assert.equal(entries[0].actor.id, t.tokenId)
    assert.equal(entries[0].details.orderId, String(b1.id))
    const reads = await t.call('GET', '/admin/v1/audit-log?action=order.read')
    assert.equal(reads.json().data.length, 1)
  })

  // Issue 43: the console listed the oldest orders first and named their owner by key id only.
  test('newest first with order=desc (paged the same way), a customer filter, and each order names its key and customer', async () => {
    const customer = (await t.call('POST', '/admin/v1/customers', { name: 'Order Co', plan: 'pro' })).json()
    const made = await t.call('POST', '/admin/v1/keys', { name: 'Order Co web', customerId: customer.id })
    assert.equal(made.statusCode, 201, made.body)
    const web = { key: made.json().key as string, id: made.json().apiKey.id as string }
    const batchKey = (await t.call('POST', '/admin/v1/keys', { name: 'Order Co batch', customerId: customer.id })).json().key as string
    const plain = await newKey('plain')
    const c1 = await placeOrder(web.key)
    const p1 = await placeOrder(plain.key)
    const c2 = await placeOrder(batchKey)
    const ids = (res: { json(): { data: Array<{ id: number }> } }) => res.json().data.map((o) => o.id)

    const newest = await t.call('GET', '/admin/v1/orders?order=desc&limit=2')
    assert.equal(newest.statusCode, 200, newest.body)
    assert.deepEqual(ids(newest), [c2.id, p1.id])
    assert.equal(newest.headers.link, `</admin/v1/orders?limit=2&order=desc&after=${p1.id}>; rel="next"`)
    const older = await t.call('GET', `/admin/v1/orders?order=desc&limit=2&after=${p1.id}`)
    assert.equal(ids(older)[0], c1.id)
    assert.ok(
      ids(older).every((id: number, i: number, all: number[]) => id < p1.id && (i === 0 || id < all[i - 1]!)),
      'the next page holds the older orders, newest first',
    )
    const oldest = await t.call('GET', '/admin/v1/orders?limit=1')
    assert.ok(ids(oldest)[0]! < c1.id, 'without order: oldest first, as before')

    const ofCustomer = await t.call('GET', `/admin/v1/orders?customerId=${customer.id}&order=desc`)
    assert.deepEqual(ids(ofCustomer), [c2.id, c1.id], 'the orders of every key of the customer, and only theirs')
    assert.deepEqual(ids(await t.call('GET', `/admin/v1/orders?customerId=${customer.id}&keyId=${web.id}`)), [c1.id])
    assert.deepEqual((await t.call('GET', '/admin/v1/orders?customerId=cus_AAAAAAAAAAAAAAAA')).json(), { data: [], nextAfter: null })
    assert.equal((await t.call('GET', '/admin/v1/orders?customerId=acme')).statusCode, 400)
    assert.equal((await t.call('GET', '/admin/v1/orders?order=newest')).statusCode, 400)

    const [second, first] = ofCustomer.json().data
    assert.deepEqual([second.keyName, second.customerId], ['Order Co batch', customer.id])
    assert.deepEqual([first.keyId, first.keyName, first.customerId], [web.id, 'Order Co web', customer.id])
    const plainOne = (await t.call('GET', `/admin/v1/orders/${p1.id}`)).json()
    assert.deepEqual([plainOne.keyName, plainOne.customerId], ['plain', null])
    const cancelled = (await t.call('POST', `/admin/v1/orders/${c1.id}/cancel`)).json()
    assert.deepEqual([cancelled.status, cancelled.keyName, cancelled.customerId], ['cancelled', 'Order Co web', customer.id])

    const listed = (await t.call('GET', '/admin/v1/audit-log?action=order.list&order=desc&limit=3')).json().data
    assert.ok(
      listed.some((e: { details: Record<string, unknown> }) => e.details.customerId === customer.id && e.details.order === 'desc'),
      'the listing is on record with its customer filter and order',
    )
  })

  // The fuzzer: `after` above 2^53 is parsed as a bigint, which the audit entry's JSON could not
  // hold (a 500). Its digits are kept as written.
  test('a page after an id above 2^53 is an empty page, on record with its digits', async () => {
    const res = await t.call('GET', '/admin/v1/orders?after=9007199254740993')
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { data: [], nextAfter: null })
    const lists = (await t.call('GET', '/admin/v1/audit-log?action=order.list&order=desc&limit=1')).json().data
    assert.equal(lists[0].details.after, '9007199254740993')
  })
})
