/**
 * GET /v1/events (listEvents, api/events/list.ts) through app.inject: a caller sees its customer's
 * events (every key of it), or its key chain's without a customer, never another's; order events
 * need orders:read (left out without it, 403 when asked for by type); `limit`, `after` and the
 * Link header page through them; `type` filters, from the closed list only.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type AdminTestApp, buildAdminTestApp } from '../../admin/helpers.js'
import { bearer } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'

async function make(a: AdminTestApp, path: string, body: unknown) {
  const res = await a.call('POST', path, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

const json = { 'content-type': 'application/json' }
const post = (a: AdminTestApp, key: string, url: string, payload: unknown) =>
  a.api.inject({ method: 'POST', url, headers: { ...bearer(key), ...json }, payload: JSON.stringify(payload) })
const list = (a: AdminTestApp, key: string, url = '/v1/events?limit=100') => a.api.inject({ url, headers: bearer(key) })
/** The types listed, but the key events (their keys' creation, shown in the first test). */
const types = async (a: AdminTestApp, key: string, url?: string) => {
  const res = await list(a, key, url)
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as Array<{ type: string }>).map((e) => e.type).filter((type) => !type.startsWith('key.'))
}

/** An animal created and ordered by `key`: one pet.created, one order.placed, both its owner's. */
async function petAndOrder(a: AdminTestApp, key: string) {
  const pet = (await post(a, key, '/v1/pets', { name: 'Rex', categoryId: 1, status: 'available' })).json()
  assert.equal((await post(a, key, '/v1/store/orders', { petId: pet.id })).statusCode, 201)
}

describe('listEvents', () => {
  test("a customer's keys share its events; a key without one sees its chain's; no caller sees another's", async (t) => {
    const a = await buildAdminTestApp(t)
    const shop = await make(a, '/admin/v1/customers', { name: 'Shop', plan: 'pro' })
    const [s1, s2] = [
      (await make(a, '/admin/v1/keys', { name: 's1', customerId: shop.id })).key,
      (await make(a, '/admin/v1/keys', { name: 's2', customerId: shop.id })).key,
    ]
    const plain = await make(a, '/admin/v1/keys', { name: 'p', plan: 'pro' })
    const other = (await make(a, '/admin/v1/keys', { name: 'o', plan: 'pro' })).key
    await petAndOrder(a, s1)
    await petAndOrder(a, plain.key)
    assert.deepEqual(await types(a, s2), ['pet.created', 'order.placed'], "the other key of the customer sees the customer's")
    const keyEvents = (await list(a, s2)).json().filter((e: { type: string }) => e.type === 'key.created')
    assert.equal(keyEvents.length, 2, "both keys' creation: the customer's")
    assert.deepEqual(await types(a, plain.key), ['pet.created', 'order.placed'])
    assert.deepEqual(await types(a, other), [], 'nothing of anyone else')
    // The successor of a rotation sees its chain's events.
    const rotated = await make(a, `/admin/v1/keys/${plain.apiKey.id}/rotate`, { gracePeriodSeconds: 60 })
    assert.deepEqual(await types(a, rotated.key), ['pet.created', 'order.placed'])
  })

  test('order events need orders:read: left out without it, and 403 naming it when asked for by type', async (t) => {
    const a = await buildAdminTestApp(t)
    const shop = await make(a, '/admin/v1/customers', { name: 'Shop', plan: 'pro' })
    const writer = (await make(a, '/admin/v1/keys', { name: 'w', customerId: shop.id })).key
    const petsOnly = (await make(a, '/admin/v1/keys', { name: 'r', customerId: shop.id, scopes: ['pets:read'] })).key
    await petAndOrder(a, writer)
    assert.deepEqual(await types(a, petsOnly), ['pet.created'])
    assert.deepEqual(await types(a, petsOnly, '/v1/events?type=pet.created'), ['pet.created'])
    const refused = await list(a, petsOnly, '/v1/events?type=order.placed')
    assertError(refused, 403, 'insufficient_scope', /orders:read/)
    assert.match(String(refused.headers['www-authenticate']), /scope="orders:read"/)
    assert.deepEqual(await types(a, writer, '/v1/events?type=order.placed'), ['order.placed'])
  })

  test('pages: limit, after and Link rel="next"; a type not in the list is 400 naming type', async (t) => {
    const a = await buildAdminTestApp(t)
    const key = (await make(a, '/admin/v1/keys', { name: 'k', plan: 'pro' })).key
    for (let i = 0; i < 5; i++) await post(a, key, '/v1/pets', { name: `Rex ${i}`, categoryId: 1 })
    const seen: string[] = []
    let url: string | undefined = '/v1/events?limit=2&type=pet.created'
    let pages = 0
    while (url !== undefined) {
      const res = await list(a, key, url)
      assert.equal(res.statusCode, 200, res.body)
      const page = res.json() as Array<{ data: { name: string } }>
      seen.push(...page.map((e) => e.data.name))
      pages++
      const link = res.headers.link as string | undefined
      url = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1]
      if (url !== undefined) assert.match(url, /^\/v1\/events\?limit=2&type=pet\.created&after=\d+$/)
    }
    assert.deepEqual(seen, ['Rex 0', 'Rex 1', 'Rex 2', 'Rex 3', 'Rex 4'])
    assert.equal(pages, 3)
    assertError(await list(a, key, '/v1/events?type=order.shipped'), 400, 'invalid_request', /type/)
    assertError(await list(a, key, '/v1/events?limit=101'), 400, 'invalid_request', /limit/)
  })
})
