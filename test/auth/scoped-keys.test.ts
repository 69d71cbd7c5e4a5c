/**
 * Scoped keys through app.inject, on SQLite and PostgreSQL: a key does what its scopes allow and
 * is refused the rest with 403 insufficient_scope and RFC 6750's challenge, counted against its
 * quota, before its body is read, changing nothing; scopes are set on creation and by an update
 * (in force at the next request) and copied by rotation; the input is checked, naming the field.
 * Every keyed operation of the public document names the scope it needs.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { SCOPES } from '../../src/shared/scopes.js'
import { buildAdminTestApp } from '../admin/helpers.js'
import { bearer } from '../helpers/app.js'
import { STORE_ENGINES } from '../helpers/stores.js'

/** The operations any valid key may call, whatever its scopes: named here, so that a new one is a decision this test is told of. */
const OPEN_TO_EVERY_KEY = ['getRateLimit', 'listEvents']

for (const engine of STORE_ENGINES) {
  describe(`scoped keys on ${engine.name}`, () => {
    test('a read-only key reads, and is refused a write: 403 insufficient_scope with the challenge, counted, nothing created', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const created = await a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'dashboard', scopes: ['pets:read'] })
      assert.equal(created.statusCode, 201, created.body)
      assert.deepEqual(created.json().apiKey.scopes, ['pets:read'])
      const key = created.json().key as string
      const call = (method: 'GET' | 'POST', url: string, payload?: string) =>
        a.api.inject({
          method,
          url,
          headers: { ...bearer(key), ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(payload === undefined ? {} : { payload }),
        })

      const read = await call('GET', '/v1/pets')
      assert.equal(read.statusCode, 200, read.body)
      assert.equal(read.headers['x-ratelimit-remaining'], '59')

      const write = await call('POST', '/v1/pets', JSON.stringify({ name: 'Rex', categoryId: 1 }))
      assert.equal(write.statusCode, 403, write.body)
      assert.deepEqual(write.json(), {
        code: 'insufficient_scope',
        message: 'This API key lacks the scope pets:write that POST /v1/pets needs; its scopes: pets:read',
        status: 403,
      })
      assert.equal(write.headers['www-authenticate'], 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"')
      assert.equal(write.headers['x-ratelimit-remaining'], '58', 'the refusal counts, as GitHub counts every request of a valid key')

      // Before the body is read: a body that would be 400 is still the 403.
      const broken = await call('POST', '/v1/pets', '{"name":')
      assert.equal(broken.statusCode, 403, broken.body)
      for (const [method, url, scope] of [
        ['POST', '/v1/store/orders', 'orders:write'],
        ['GET', '/v1/store/orders', 'orders:read'],
        ['GET', '/v1/store/inventory', 'orders:read'],
        ['POST', '/v1/store/orders/1/cancel', 'orders:write'],
      ] as const) {
        const res = await call(method, url, method === 'POST' ? '{}' : undefined)
        assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`)
        assert.match(res.headers['www-authenticate'] as string, new RegExp(`scope="${scope}"`))
      }
      const pets = await call('GET', '/v1/pets')
      assert.deepEqual(pets.json(), [], 'nothing was created')
      assert.equal(pets.headers['x-ratelimit-remaining'], String(60 - 8))
    })

    test('scopes changed by an update apply at the next request; rotation copies them; the audit log names the change', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const created = (await a.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'app', scopes: ['orders:read', 'pets:read'] })).json()
      assert.deepEqual(created.apiKey.scopes, ['pets:read', 'orders:read'], 'in the list order, whatever the order sent')
      const post = () =>
        a.api.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...bearer(created.key), 'content-type': 'application/json' },
          payload: { name: 'Rex', categoryId: 1 },
        })
      assert.equal((await post()).statusCode, 403)
      const updated = await a.call('PATCH', `/admin/v1/keys/${created.apiKey.id}`, { scopes: ['pets:read', 'pets:write'] })
      assert.equal(updated.statusCode, 200, updated.body)
      assert.deepEqual(updated.json().scopes, ['pets:read', 'pets:write'])
      assert.equal((await post()).statusCode, 201, 'the cached key was replaced at once')
      const audit = (await a.call('GET', `/admin/v1/audit-log?keyId=${created.apiKey.id}&action=key.update`)).json().data
      assert.deepEqual(audit[0].details.changed, ['scopes'])
      assert.deepEqual(audit[0].details.scopes, ['pets:read', 'pets:write'])

      const rotated = await a.call('POST', `/admin/v1/keys/${created.apiKey.id}/rotate`, { gracePeriodSeconds: 0 })
      assert.equal(rotated.statusCode, 201, rotated.body)
      assert.deepEqual(rotated.json().apiKey.scopes, ['pets:read', 'pets:write'])
      const orders = await a.api.inject({ method: 'GET', url: '/v1/store/orders', headers: bearer(rotated.json().key) })
      assert.equal(orders.statusCode, 403, 'the successor has the same scopes, no more')
    })

    test('scopes are checked: at least one, known, each once; all four by default', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const plain = (await a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'all' })).json()
      assert.deepEqual(plain.apiKey.scopes, [...SCOPES])
      for (const [scopes, message] of [
        [[], 'scopes must not be empty'],
        [['pets:admin'], 'scopes.0 must be one of pets:read, pets:write, orders:read, orders:write'],
        [['pets:read', 'pets:read'], 'scopes must not name the same value twice (items 0 and 1)'],
        ['pets:read', 'scopes must be an array'],
        [[1], 'scopes.0 must be a string'],
      ] as const) {
        const res = await a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'bad', scopes })
        assert.equal(res.statusCode, 400, `${JSON.stringify(scopes)}: ${res.body}`)
        assert.equal(res.json().message, message, JSON.stringify(scopes))
        const patched = await a.call('PATCH', `/admin/v1/keys/${plain.apiKey.id}`, { scopes })
        assert.equal(patched.statusCode, 400, `PATCH ${JSON.stringify(scopes)}: ${patched.body}`)
      }
      assert.deepEqual((await a.call('GET', `/admin/v1/keys/${plain.apiKey.id}`)).json().scopes, [...SCOPES], 'unchanged')
    })
  })
}

test('every keyed operation of the public document names its scope, and documents the 403', async (t) => {
  const a = await buildAdminTestApp(t)
  const doc = (await a.api.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  type Operation = { operationId: string; security?: Array<Record<string, string[]>>; responses: Record<string, unknown> }
  const operations = Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((methods) => Object.values(methods))
  assert.ok(operations.length >= 8)
  for (const op of operations) {
    if (OPEN_TO_EVERY_KEY.includes(op.operationId)) {
      assert.equal(op.security, undefined, `${op.operationId}: the document's default (any key)`)
      continue
    }
    const scopes = op.security?.[0]?.bearerAuth
    assert.equal(scopes?.length, 1, `${op.operationId} names one scope`)
    assert.ok((SCOPES as readonly string[]).includes(scopes![0]!), op.operationId)
    assert.ok(op.responses['403'], `${op.operationId} documents its 403`)
  }
  const byId = Object.fromEntries(operations.map((op) => [op.operationId, op.security?.[0]?.bearerAuth?.[0]]))
  assert.equal(byId.createPet, 'pets:write')
  assert.equal(byId.getInventory, 'orders:read')
  assert.equal(byId.placeOrder, 'orders:write')
})
