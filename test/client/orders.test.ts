/**
 * The client's store methods against the app on a loopback port (client.orders.*, client.inventory()):
 * typed answers, the errors typed by code, paging, and the Idempotency-Key that makes an order safe to retry.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { AnimalStoreClient, ApiError, type AttemptEvent } from '../../client/src/index.js'
import { openTestApp, type TestApp } from '../helpers/app.js'

describe('client: the store', () => {
  let t: TestApp
  let client: AnimalStoreClient
  const events: AttemptEvent[] = []

  before(async () => {
    t = await openTestApp()
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1`
    const apiKey = await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 })
    client = new AnimalStoreClient({ baseUrl, apiKey, onAttempt: (e) => events.push(e) })
  })
  after(() => t.close())

  const code = (error: unknown) => (error instanceof ApiError ? `${error.status} ${error.code}` : String(error))

  test('place, get, complete, cancel and the inventory: typed, and refusals typed by code', async () => {
    const before = await client.inventory()
    const rex = await client.createPet({ name: 'Rex', categoryId: 7, status: 'available' })
    const max = await client.createPet({ name: 'Max', categoryId: 7, status: 'available' })
    const order = await client.orders.place(rex.id)
    assert.deepEqual([order.petId, order.status, order.endedAt], [rex.id, 'placed', undefined])
    assert.ok(Date.parse(order.expiresAt) > Date.parse(order.createdAt))
    assert.deepEqual(await client.orders.get(order.id), order)
    assert.deepEqual(await client.inventory(), { ...before, available: before.available + 1, pending: before.pending + 1 })
    await assert.rejects(client.orders.place(rex.id), (e) => code(e) === '409 pet_not_available')
    await assert.rejects(client.orders.place(10_000_000), (e) => code(e) === '422 unknown_pet')
    const completed = await client.orders.complete(order.id)
    assert.equal(completed.status, 'completed')
    await assert.rejects(
      client.orders.cancel(order.id),
      (e) => code(e) === '409 order_not_placed' && /completed/.test((e as Error).message),
    )
    const other = await client.orders.place(max.id)
    assert.equal((await client.orders.cancel(other.id)).status, 'cancelled')
    assert.equal((await client.getPet(max.id)).status, 'available')
    assert.deepEqual(await client.inventory(), { ...before, available: before.available + 1, sold: before.sold + 1 })
    await assert.rejects(client.orders.get(99_999), (e) => code(e) === '404 not_found')
  })

  test('every order is placed with an Idempotency-Key: the same key twice is one order, replayed', async () => {
    const pet = await client.createPet({ name: 'Once', categoryId: 1, status: 'available' })
    const first = await client.orders.place(pet.id, { idempotencyKey: 'client-order-1' })
    const again = await client.orders.place(pet.id, { idempotencyKey: 'client-order-1' })
    assert.deepEqual(again, first)
    const sent = events.filter((e) => e.method === 'POST' && e.url.endsWith('/v1/store/orders'))
    assert.ok(sent.length >= 2)
    await assert.rejects(client.orders.place(pet.id, { idempotencyKey: 'two words' }), TypeError)
  })

  test('list, pages and all walk the caller’s orders by Link rel="next", with the status filter', async () => {
    const placed: number[] = []
    for (let i = 0; i < 7; i++) {
      const pet = await client.createPet({ name: `walk-${i}`, categoryId: 3, status: 'available' })
      placed.push(Number((await client.orders.place(pet.id)).id))
    }
    const pages: number[] = []
    for await (const page of client.orders.pages({ status: 'placed', limit: 3 })) pages.push(page.length)
    const all: number[] = []
    for await (const order of client.orders.all({ status: 'placed', limit: 3 })) all.push(Number(order.id))
    assert.ok(placed.every((id) => all.includes(id)))
    assert.deepEqual(
      all,
      [...all].sort((a, b) => a - b),
    )
    assert.equal(
      pages.reduce((a, b) => a + b, 0),
      all.length,
    )
    assert.ok(pages.slice(0, -1).every((n) => n === 3))
    assert.equal((await client.orders.list({ limit: 2 })).length, 2)
  })
})
