/**
 * The client's conditional reads (inventoryIfChanged, listPetsIfChanged, orders.getIfChanged,
 * orders.listIfChanged) against the app on a loopback port: the ETag comes back, a current one is
 * `notModified` (a 304, not counted against the quota), a stale one the new answer and its ETag.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { AnimalStoreClient, type AttemptEvent } from '../../client/src/index.js'
import { buildTestApp } from '../helpers/app.js'

test('client: conditional reads return the ETag, then notModified until a change', async (t) => {
  const app = await buildTestApp(t)
  await app.app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/v1`
  const events: AttemptEvent[] = []
  const client = new AnimalStoreClient({ baseUrl, apiKey: await app.key({ plan: 'pro' }), onAttempt: (e) => events.push(e) })
  const remaining = () => Number(events.at(-1)!.headers!.get('x-ratelimit-remaining'))

  const rex = await client.createPet({ name: 'Rex', categoryId: 7, status: 'available' })
  const counts = await client.inventoryIfChanged()
  assert.ok(!counts.notModified && counts.etag !== undefined)
  assert.deepEqual(counts.value, { available: 1, pending: 0, sold: 0 })
  const pets = await client.listPetsIfChanged({ limit: 10 })
  assert.ok(!pets.notModified)
  assert.deepEqual(pets.value, [rex])
  const before = remaining()

  assert.deepEqual(await client.inventoryIfChanged({ etag: counts.etag }), { notModified: true, etag: counts.etag })
  assert.deepEqual(await client.listPetsIfChanged({ limit: 10 }, { etag: pets.etag }), { notModified: true, etag: pets.etag })
  assert.equal(remaining(), before, 'a 304 is not counted')
  assert.equal(events.at(-1)!.status, 304)

  const order = await client.orders.place(rex.id)
  const one = await client.orders.getIfChanged(order.id)
  const list = await client.orders.listIfChanged()
  assert.ok(!one.notModified && !list.notModified)
  assert.deepEqual([one.value, list.value], [order, [order]])
  assert.equal((await client.orders.getIfChanged(order.id, { etag: one.etag })).notModified, true)
  assert.equal((await client.orders.listIfChanged({}, { etag: list.etag })).notModified, true)

  // The order moved the inventory and the animal: the old tags get the new answers.
  const moved = await client.inventoryIfChanged({ etag: counts.etag })
  assert.ok(!moved.notModified)
  assert.deepEqual(moved.value, { available: 0, pending: 1, sold: 0 })
  assert.notEqual(moved.etag, counts.etag)
  const changed = await client.listPetsIfChanged({ limit: 10 }, { etag: pets.etag })
  assert.ok(!changed.notModified)
  assert.equal(changed.value[0]!.status, 'pending')
})
