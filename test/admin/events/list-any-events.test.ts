/**
 * GET /admin/v1/events (listAnyEvents, admin/events/list.ts): every caller's events with whose
 * each one is, filtered by type, customer and key, paged with `after` and Link rel="next", and each
 * listing on the audit log as `event.list` (a read).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { bearer } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'
import { type AdminTestApp, buildAdminTestApp } from '../helpers.js'

async function make(a: AdminTestApp, path: string, body: unknown) {
  const res = await a.call('POST', path, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

const createPet = (a: AdminTestApp, key: string, name: string) =>
  a.api.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    payload: JSON.stringify({ name, categoryId: 1 }),
  })

describe('listAnyEvents', () => {
  test("every caller's events with whose they are; filters; paging; on record as event.list", async (t) => {
    const a = await buildAdminTestApp(t)
    const shop = await make(a, '/admin/v1/customers', { name: 'Shop', plan: 'pro' })
    const mine = await make(a, '/admin/v1/keys', { name: 'm', customerId: shop.id })
    const plain = await make(a, '/admin/v1/keys', { name: 'p', plan: 'pro' })
    await createPet(a, mine.key, 'Rex')
    await createPet(a, plain.key, 'Tom')

    const all = await a.call('GET', '/admin/v1/events')
    assert.equal(all.statusCode, 200, all.body)
    const page = all.json()
    assert.deepEqual(
      page.data.map((e: { type: string; keyId: string }) => [e.type, e.keyId]),
      [
        ['key.created', mine.apiKey.id],
        ['key.created', plain.apiKey.id],
        ['pet.created', mine.apiKey.id],
        ['pet.created', plain.apiKey.id],
      ],
    )
    assert.equal(page.nextAfter, null)
    const rex = page.data[2]
    assert.deepEqual(Object.keys(rex), ['id', 'type', 'timestamp', 'customerId', 'keyChainId', 'keyId', 'data'])
    assert.equal(rex.customerId, shop.id)
    assert.equal(rex.keyChainId, mine.apiKey.id)
    assert.equal(rex.data.name, 'Rex')

    const names = async (query: string) =>
      (await a.call('GET', `/admin/v1/events?${query}`))
        .json()
        .data.map((e: { type: string; data: { name: string } }) => `${e.type}:${e.data.name}`)
    assert.deepEqual(await names('type=pet.created'), ['pet.created:Rex', 'pet.created:Tom'])
    assert.deepEqual(await names(`customerId=${shop.id}&type=pet.created`), ['pet.created:Rex'])
    assert.deepEqual(await names(`keyId=${plain.apiKey.id}`), ['key.created:p', 'pet.created:Tom'])

    const first = await a.call('GET', '/admin/v1/events?limit=3&type=pet.created')
    assert.equal(first.headers.link, undefined)
    const paged = await a.call('GET', '/admin/v1/events?limit=1')
    const next = paged.json().nextAfter
    assert.equal(typeof next, 'number')
    assert.equal(paged.headers.link, `</admin/v1/events?limit=1&after=${next}>; rel="next"`)
    assertError(await a.call('GET', '/admin/v1/events?type=nope'), 400, 'invalid_request', /type/)

    const audit = (await a.call('GET', '/admin/v1/audit-log?action=event.list')).json().data
    assert.ok(audit.length >= 6)
    assert.deepEqual(audit[1].details, { limit: 20, type: 'pet.created' })
    assert.equal((await a.call('GET', '/admin/v1/audit-log?action=event.list&kind=read')).json().data.length, audit.length, 'a read')
  })
})
