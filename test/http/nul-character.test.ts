/**
 * U+0000 (NUL) in any text a client sends: PostgreSQL can neither store it nor take it as a query
 * parameter (a 500 there), SQLite stores it (a 201 there). The validator refuses it for every
 * route, before either store is asked: the same 400 naming the field on both, and nothing stored
 * or recorded. Text with any other character the schema allows is answered as before.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildAdminTestApp } from '../admin/helpers.js'
import { bearer } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'
import { STORE_ENGINES } from '../helpers/stores.js'

for (const engine of STORE_ENGINES) {
  describe(`NUL in text a client sends: ${engine.name}`, () => {
    test('a 400 naming the field, the same on both stores; nothing stored, nothing in the audit log', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const created = await a.call('POST', '/admin/v1/keys', { plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000, name: 'nul' })
      assert.equal(created.statusCode, 201, created.body)
      const { key, apiKey } = created.json() as { key: string; apiKey: { id: string } }
      const auth = bearer(key)
      const createPet = (body: unknown, headers: Record<string, string> = {}) =>
        a.api.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...auth, 'content-type': 'application/json', ...headers },
          payload: JSON.stringify(body),
        })
      const auditBefore = (await storage.audit.list({ limit: 100 })).entries.length

      const refusals: Array<[string, Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>, string]> = [
        ['pet name', createPet({ name: 'Rex\u0000', categoryId: 1 }), 'name must not contain U+0000 (NUL)'],
        ['pet name of NUL alone', createPet({ name: '\u0000', categoryId: 1 }), 'name must not contain U+0000 (NUL)'],
        [
          'metadata value',
          a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'm', metadata: { customer: 'c\u000042' } }),
          'metadata.customer must not contain U+0000 (NUL)',
        ],
        [
          'metadata key',
          a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'm', metadata: { 'cus\u0000tomer': 'c42' } }),
          'metadata must not have a field name containing U+0000 (NUL)',
        ],
        [
          'nested metadata, on update',
          a.call('PATCH', `/admin/v1/keys/${apiKey.id}`, { metadata: { tags: ['ok', 'x\u0000'] } }),
          'metadata.tags.1 must not contain U+0000 (NUL)',
        ],
        [
          'key name (a control character, as before)',
          a.call('POST', '/admin/v1/keys', { plan: 'free', name: 'm\u0000' }),
          'name must not contain control characters (U+0000–U+001F, U+007F–U+009F)',
        ],
        ['key list filter', a.call('GET', '/admin/v1/keys?name=ac%00me'), 'query parameter name must not contain U+0000 (NUL)'],
        ['audit actor filter', a.call('GET', '/admin/v1/audit-log?actor=%00'), 'query parameter actor must not contain U+0000 (NUL)'],
      ]
      for (const [what, answer, message] of refusals) {
        const res = await answer
        assertError(res, 400, 'invalid_request')
        assert.equal(JSON.parse(res.body).message, message, what)
      }
      // Idempotency-Key (stored with its animal) takes visible ASCII only: refused by its own rule.
      const idempotent = await createPet({ name: 'Rex', categoryId: 1 }, { 'idempotency-key': 'k\u0000' })
      assertError(idempotent, 400, 'invalid_request')
      assert.match(idempotent.json().message, /^Idempotency-Key must be 1 to 255 visible ASCII characters/)

      const pets = await a.api.inject({ url: '/v1/pets', headers: auth })
      assert.deepEqual(pets.json(), [], 'no animal stored')
      const keys = await storage.keys.listKeys()
      assert.deepEqual(
        keys.map((k) => [k.name, k.metadata]),
        [['nul', null]],
        'no key stored or changed',
      )
      assert.equal((await storage.audit.list({ limit: 100 })).entries.length, auditBefore, 'nothing in the audit log')
    })

    test('text with any other character is answered as before: stored and read back exactly', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const created = await a.call('POST', '/admin/v1/keys', {
        plan: 'free',
        name: 'Ünïcode 😀',
        metadata: { 'tab\tkey': 'line\nbreak \u0001 \u007f \u009f', nested: { list: ['\u00e9', ''] } },
      })
      assert.equal(created.statusCode, 201, created.body)
      const { key, apiKey } = created.json() as { key: string; apiKey: { id: string; metadata: unknown } }
      assert.deepEqual(apiKey.metadata, { 'tab\tkey': 'line\nbreak \u0001 \u007f \u009f', nested: { list: ['\u00e9', ''] } })
      const name = 'Rex \u0001\u001f\u007f\u2028 😀'
      const pet = await a.api.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        payload: JSON.stringify({ name, categoryId: 7 }),
      })
      assert.equal(pet.statusCode, 201, pet.body)
      assert.equal(pet.body, `{"id":${pet.json().id},"name":${JSON.stringify(name)},"categoryId":7}`)
      const read = await a.api.inject({ url: pet.headers.location as string, headers: bearer(key) })
      assert.equal(read.body, pet.body)
      const found = await a.call('GET', '/admin/v1/keys?name=CODE')
      assert.deepEqual(
        found.json().data.map((k: { id: string }) => k.id),
        [apiKey.id],
      )
    })
  })
}
