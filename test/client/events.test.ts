/**
 * The client's event methods against the app on a loopback port (client.events.*): the caller's
 * events typed, a type filter, paging through Link rel="next", an int64 in an event's data exact.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { AnimalStoreClient, ApiError } from '../../client/src/index.js'
import { openTestApp, type TestApp } from '../helpers/app.js'

describe('client: the event log', () => {
  let t: TestApp
  let client: AnimalStoreClient
  let baseUrl: string

  before(async () => {
    t = await openTestApp()
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1`
    client = new AnimalStoreClient({ baseUrl, apiKey: await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }) })
  })
  after(() => t.close())

  test('list, a type, every page; data as the API showed it', async () => {
    const rex = await client.createPet({ name: 'Rex', categoryId: 9_007_199_254_740_993n, status: 'available' })
    const order = await client.orders.place(rex.id)
    for (let i = 0; i < 3; i++) await client.createPet({ name: `Kit ${i}`, categoryId: 1 })
    const first = await client.events.list({ limit: 2 })
    assert.deepEqual(
      first.map((e) => e.type),
      ['pet.created', 'order.placed'],
    )
    assert.equal(first[0]!.data.categoryId, 9_007_199_254_740_993n, 'int64 exact')
    assert.deepEqual(first[1]!.data, order)
    assert.deepEqual(
      (await client.events.list({ type: 'order.placed' })).map((e) => e.data.id),
      [order.id],
    )
    const pages: number[] = []
    const names: string[] = []
    for await (const page of client.events.pages({ limit: 2, type: 'pet.created' })) {
      pages.push(page.length)
      names.push(...page.map((e) => String(e.data.name)))
    }
    assert.deepEqual(pages, [2, 2])
    assert.deepEqual(names, ['Rex', 'Kit 0', 'Kit 1', 'Kit 2'])
    const petsOnly = new AnimalStoreClient({ baseUrl, apiKey: await t.key({ plan: 'pro', scopes: ['pets:read'] }) })
    await assert.rejects(
      petsOnly.events.list({ type: 'order.placed' }),
      (e) => e instanceof ApiError && e.status === 403 && e.code === 'insufficient_scope',
    )
  })
})
