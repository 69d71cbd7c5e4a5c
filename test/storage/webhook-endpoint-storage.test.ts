/**
 * Storage of webhook endpoints (src/webhooks/repository.ts), the same assertions on SQLite and
 * PostgreSQL: what is written is read back as it was (events, enabled, secrets, times), pages in
 * id order with their filters, an update only while the endpoint is as its caller read it, a
 * deletion once; each change commits its record (its audit entry) in its own transaction, or
 * neither: a record that cannot be written undoes the change.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { RecordedChange } from '../../src/changes/audit-log.js'
import type { Storage } from '../../src/storage/storage.js'
import type { WebhookEndpointRecord } from '../../src/webhooks/endpoint.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0)

const endpoint = (id: string, fields: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord => ({
  id,
  url: `https://hooks.example.com/${id}`,
  description: null,
  events: ['order.placed', 'order.expired'],
  customerId: null,
  enabled: true,
  secret: `whsec_${id}`,
  previousSecret: null,
  previousSecretExpiresAt: null,
  failingSince: null,
  disabledReason: null,
  createdAt: T0,
  updatedAt: T0,
  ...fields,
})

const recordOf = (details: Record<string, unknown>): RecordedChange => ({
  audit: [{ at: T0, actor: { type: 'cli', id: 'test' }, action: 'webhook_endpoint.update', keyId: null, details, requestId: null }],
})
const failing = (): RecordedChange => ({
  audit: [
    // An action the audit log's columns take, with details that cannot be written as JSON: the insert fails.
    { at: T0, actor: { type: 'cli', id: 'test' }, action: 'webhook_endpoint.update', keyId: null, details: { n: 1n }, requestId: null },
  ],
})

const recorded = async (storage: Storage) => (await storage.audit.list({ limit: 100 })).entries.map((e) => e.details)

async function withCustomer(storage: Storage, id: string): Promise<void> {
  await storage.customers.insertCustomer(
    { id, name: 'Acme', plan: 'pro', perMinute: 300, perDay: 10_000, metadata: null, createdAt: T0, updatedAt: T0 },
    { audit: [] },
  )
}

for (const engine of STORE_ENGINES) {
  describe(`webhook endpoints on ${engine.name}`, () => {
    test('written and read back as they were, with the record of the change in its transaction', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await withCustomer(storage, 'cus_0000000000000001')
      const all = endpoint('we_0000000000000001', { events: ['*'], description: 'every event' })
      const rotated = endpoint('we_0000000000000002', {
        customerId: 'cus_0000000000000001',
        enabled: false,
        disabledReason: 'gone',
        failingSince: T0 - 60_000,
        previousSecret: 'whsec_old',
        previousSecretExpiresAt: T0 + 86_400_000,
      })
      await storage.webhookEndpoints.insertEndpoint(all, recordOf({ endpointId: all.id }))
      await storage.webhookEndpoints.insertEndpoint(rotated, recordOf({ endpointId: rotated.id }))
      assert.deepEqual(await storage.webhookEndpoints.findEndpointById(all.id), all)
      assert.deepEqual(await storage.webhookEndpoints.findEndpointById(rotated.id), rotated)
      assert.equal(await storage.webhookEndpoints.findEndpointById('we_0000000000000009'), undefined)
      assert.deepEqual(await recorded(storage), [{ endpointId: all.id }, { endpointId: rotated.id }])

      await assert.rejects(storage.webhookEndpoints.insertEndpoint(endpoint('we_0000000000000003'), failing()))
      assert.equal(await storage.webhookEndpoints.findEndpointById('we_0000000000000003'), undefined, 'undone with its record')
      // A customer that does not exist is refused by the store too.
      await assert.rejects(
        storage.webhookEndpoints.insertEndpoint(endpoint('we_0000000000000004', { customerId: 'cus_none' }), { audit: [] }),
      )
    })

    test('pages in ascending id order after the cursor, filtered by customer and state', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await withCustomer(storage, 'cus_0000000000000001')
      // Ids that sort differently by byte and by a locale's collation (upper case before lower case in bytes).
      const ids = ['we_000000000000000a', 'we_000000000000000B', 'we_0000000000000001', 'we_000000000000000Z']
      for (const [i, id] of ids.entries())
        await storage.webhookEndpoints.insertEndpoint(
          endpoint(id, {
            customerId: i % 2 === 0 ? 'cus_0000000000000001' : null,
            ...(i === 1 ? { enabled: false, disabledReason: 'manual' } : {}),
          }),
          { audit: [] },
        )
      const page = async (filter: Parameters<Storage['webhookEndpoints']['pageEndpoints']>[0]) =>
        (await storage.webhookEndpoints.pageEndpoints(filter)).map((e) => e.id)
      const sorted = [...ids].sort((a, b) => (a < b ? -1 : 1))
      assert.deepEqual(await page({ limit: 10 }), sorted)
      assert.deepEqual(await page({ limit: 2 }), sorted.slice(0, 2))
      assert.deepEqual(await page({ limit: 10, after: sorted[1] }), sorted.slice(2))
      assert.deepEqual(
        await page({ limit: 10, customerId: 'cus_0000000000000001' }),
        sorted.filter((id) => [ids[0], ids[2]].includes(id)),
      )
      assert.deepEqual(await page({ limit: 10, state: 'disabled' }), [ids[1]])
      assert.deepEqual(await page({ limit: 10, state: 'enabled', customerId: 'cus_0000000000000001' }).then((p) => p.length), 2)
    })

    test('an update writes only over the endpoint its caller read; its record commits with it or not at all', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const before = endpoint('we_0000000000000001')
      await storage.webhookEndpoints.insertEndpoint(before, { audit: [] })
      const next = {
        ...before,
        url: 'https://hooks.example.com/elsewhere',
        events: ['*'] as ['*'],
        description: 'moved',
        enabled: false,
        disabledReason: 'manual' as const,
        secret: 'whsec_new',
        previousSecret: before.secret,
        previousSecretExpiresAt: T0 + 1000,
        failingSince: T0 - 5,
        updatedAt: T0 + 1,
      }
      // Not as the caller read it (another writer came first): nothing written, nothing recorded.
      assert.equal(await storage.webhookEndpoints.updateEndpoint(before.id, T0 - 1, next, recordOf({ stale: true })), undefined)
      assert.deepEqual(await storage.webhookEndpoints.findEndpointById(before.id), before)
      // A record that cannot be written undoes the update.
      await assert.rejects(storage.webhookEndpoints.updateEndpoint(before.id, T0, next, failing()))
      assert.deepEqual(await storage.webhookEndpoints.findEndpointById(before.id), before)
      const updated = await storage.webhookEndpoints.updateEndpoint(before.id, T0, next, recordOf({ changed: true }))
      assert.deepEqual(updated, next)
      assert.deepEqual(await storage.webhookEndpoints.findEndpointById(before.id), next)
      assert.deepEqual(await recorded(storage), [{ changed: true }])
      // Enabled with a reason, or disabled without one: refused by the store itself.
      await assert.rejects(storage.webhookEndpoints.updateEndpoint(before.id, T0 + 1, { ...next, disabledReason: null }, { audit: [] }))
    })

    test('a deletion once: its record made from the row it deleted, in its transaction', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const one = endpoint('we_0000000000000001')
      await storage.webhookEndpoints.insertEndpoint(one, { audit: [] })
      await assert.rejects(storage.webhookEndpoints.deleteEndpoint(one.id, failing))
      assert.deepEqual(await storage.webhookEndpoints.findEndpointById(one.id), one, 'undone with its record')
      const seen: WebhookEndpointRecord[] = []
      const deleted = await storage.webhookEndpoints.deleteEndpoint(one.id, (row) => {
        seen.push(row)
        return recordOf({ deleted: row.id })
      })
      assert.deepEqual(deleted, one)
      assert.deepEqual(seen, [one])
      assert.equal(await storage.webhookEndpoints.findEndpointById(one.id), undefined)
      assert.equal(await storage.webhookEndpoints.deleteEndpoint(one.id, () => assert.fail('nothing deleted, nothing recorded')), undefined)
      assert.deepEqual(await recorded(storage), [{ deleted: one.id }])
    })
  })
}
