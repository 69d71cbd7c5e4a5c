/**
 * The key events (keys/events.ts), written by the key service with each change's own record in its
 * transaction, through the admin API on SQLite and PostgreSQL: key.created, key.rotated,
 * key.revoked (one for each key a revocation takes, none for a repeat), key.leak_reported (a
 * flagged key and a revoked one); each the key as the admin API shows it, never its secret.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createFirstKey } from '../../src/keys/key-service.js'
import { type AdminTestApp, buildAdminTestApp } from '../admin/helpers.js'
import { TEST_NOW } from '../helpers/app.js'
import { STORE_ENGINES } from '../helpers/stores.js'

async function make(a: AdminTestApp, path: string, body: unknown) {
  const res = await a.call('POST', path, body)
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body)
  return res.json()
}

const events = async (a: AdminTestApp) =>
  (await a.storage.events.list({ limit: 100 })).events.map((e) => ({ ...e, data: JSON.parse(e.data) }))

for (const engine of STORE_ENGINES) {
  describe(`key events on ${engine.name}`, () => {
    test('created, rotated, revoked along the chain, once; each the key as the admin API shows it, without its secret', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const a = await buildAdminTestApp(t, { storage })
      const shop = await make(a, '/admin/v1/customers', { name: 'Shop', plan: 'pro' })
      const created = await make(a, '/admin/v1/keys', { name: 'k', customerId: shop.id })
      const rotated = await make(a, `/admin/v1/keys/${created.apiKey.id}/rotate`, { gracePeriodSeconds: 3600 })
      const revoked = await make(a, `/admin/v1/keys/${rotated.apiKey.id}/revoke`, undefined)
      assert.equal((await a.call('POST', `/admin/v1/keys/${rotated.apiKey.id}/revoke`)).json().alreadyRevoked, true)
      const log = await events(a)
      assert.deepEqual(
        log.map((e) => [e.type, e.keyId]),
        [
          ['key.created', created.apiKey.id],
          ['key.rotated', created.apiKey.id],
          ['key.revoked', rotated.apiKey.id],
          ['key.revoked', created.apiKey.id],
        ],
        'a repeated revoke writes none',
      )
      assert.deepEqual(log[0]!.data, created.apiKey)
      assert.deepEqual(log[1]!.data, rotated.previous)
      assert.deepEqual(log[2]!.data, revoked.apiKey)
      assert.deepEqual(log[3]!.data, revoked.alsoRevoked[0])
      for (const e of log) {
        assert.equal(e.customerId, shop.id)
        assert.equal(e.keyChainId, created.apiKey.id, 'the chain is its first key')
        assert.ok(!JSON.stringify(e.data).includes(created.key) && !JSON.stringify(e.data).includes(rotated.key), 'no secret')
      }
    })

    test('the first key a start creates has its key.created, as every key has', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const first = await createFirstKey(storage.keys, 'production', TEST_NOW)
      const [event, ...rest] = (await storage.events.list({ limit: 10 })).events
      assert.deepEqual(rest, [])
      assert.deepEqual([event?.type, event?.keyId, event?.keyChainId], ['key.created', first!.record.id, first!.record.id])
      const data = JSON.parse(event!.data)
      assert.deepEqual([data.state, data.prefix, data.name], ['active', first!.record.prefix, 'first key'])
      assert.ok(!event!.data.includes(first!.key), 'never the secret')
    })

    test('a leak reported: key.leak_reported when flagged; with key.revoked when revoked', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const a = await buildAdminTestApp(t, { storage })
      const flagged = await make(a, '/admin/v1/keys', { name: 'f', plan: 'pro' })
      const leaked = await make(a, '/admin/v1/keys', { name: 'l', plan: 'pro' })
      const scanner = { actor: { type: 'secret_scanner' as const, id: 'github' } }
      const report = { url: 'https://github.com/x/y/blob/main/.env', source: 'github' }
      await a.domain.services.keys.reportLeak(flagged.key, { ...report, action: 'flag' }, scanner)
      await a.domain.services.keys.reportLeak(leaked.key, { ...report, action: 'revoke' }, scanner)
      const log = (await events(a)).filter((e) => e.type !== 'key.created')
      assert.deepEqual(
        log.map((e) => [e.type, e.keyId, e.data.state]),
        [
          ['key.leak_reported', flagged.apiKey.id, 'active'],
          ['key.leak_reported', leaked.apiKey.id, 'active'],
          ['key.revoked', leaked.apiKey.id, 'revoked'],
        ],
      )
    })
  })
}
