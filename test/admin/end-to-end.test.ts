/**
 * A key's whole life through the admin API, with the real key service on SQLite and on
 * PostgreSQL: create, call /v1 with it, rotate with a grace period (both keys work and count
 * against one quota), revoke (401 on /v1), and the audit log of it all.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, type TestContext, test } from 'node:test'
import pg from 'pg'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { buildAdminTestApp } from './helpers.js'

const ENGINES: Array<{ name: string; storage(t: TestContext): Promise<Storage | undefined | null> }> = [
  { name: 'SQLite', storage: async () => undefined },
  {
    name: 'PostgreSQL',
    async storage(t) {
      if (!(await requireService(t, 'PostgreSQL'))) return null
      const schema = `test_${randomBytes(6).toString('hex')}`
      t.after(async () => {
        const client = new pg.Client({ connectionString: PG_URL })
        await client.connect()
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await client.end()
      })
      return PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, poolSize: 2 })
    },
  },
]

for (const engine of ENGINES) {
  describe(`a key's life through the admin API (${engine.name})`, () => {
    test('create, use, rotate with grace (one quota for both keys), revoke', async (t) => {
      const storage = await engine.storage(t)
      if (storage === null) return
      const a = await buildAdminTestApp(t, storage === undefined ? {} : { storage })
      const pets = (key: string) => a.api.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })

      const created = await a.call('POST', '/admin/v1/keys', { plan: 'enterprise', name: 'e2e', perMinute: 10, perDay: 1000 })
      assert.equal(created.statusCode, 201, created.body)
      const { key: first, apiKey } = created.json()
      const r1 = await pets(first)
      assert.equal(r1.statusCode, 200)
      assert.equal(r1.headers['x-ratelimit-remaining'], '9')

      const rotated = await a.call('POST', `/admin/v1/keys/${apiKey.id}/rotate`, { gracePeriodSeconds: 3600 })
      assert.equal(rotated.statusCode, 201, rotated.body)
      const { key: second, apiKey: next, previous } = rotated.json()
      assert.equal(next.quotaId, apiKey.quotaId)
      assert.equal(previous.state, 'active')
      // Both keys work during the grace period, and count against the one quota.
      const r2 = await pets(second)
      assert.equal(r2.statusCode, 200)
      assert.equal(r2.headers['x-ratelimit-remaining'], '8')
      const r3 = await pets(first)
      assert.equal(r3.statusCode, 200)
      assert.equal(r3.headers['x-ratelimit-remaining'], '7')
      const usage = (await a.call('GET', `/admin/v1/keys/${next.id}/usage`)).json()
      assert.equal(usage.quotaId, apiKey.quotaId)
      assert.deepEqual([usage.minute.used, usage.minute.remaining], [3, 7])
      assert.equal((await a.call('GET', `/admin/v1/keys/${apiKey.id}/usage`)).json().minute.used, 3)

      // Revoking the old key ends its grace at once; the new key goes on until revoked too.
      for (const [id, key] of [
        [apiKey.id, first],
        [next.id, second],
      ]) {
        const revoked = await a.call('POST', `/admin/v1/keys/${id}/revoke`)
        assert.equal(revoked.statusCode, 200, revoked.body)
        assert.equal(revoked.json().apiKey.state, 'revoked')
        await a.domain.keyResolver.refresh()
        const refused = await pets(key)
        assert.equal(refused.statusCode, 401)
        assert.equal(refused.json().code, 'unauthorized')
      }

      const audit = (await a.call('GET', '/admin/v1/audit-log?limit=100')).json().data as Array<{
        action: string
        keyId: string
        actor: unknown
      }>
      assert.deepEqual(
        audit.map((e) => [e.action, e.keyId]),
        [
          ['key.create', apiKey.id],
          ['key.rotate', apiKey.id],
          ['key.usage', next.id],
          ['key.usage', apiKey.id],
          ['key.revoke', apiKey.id],
          ['key.revoke', next.id],
        ],
      )
      for (const e of audit) assert.deepEqual(e.actor, { type: 'admin_token', id: a.tokenId, name: 'test token' })
      const text = JSON.stringify(audit)
      for (const secret of [first, second, a.token]) assert.equal(text.includes(secret), false)
    })
  })
}
