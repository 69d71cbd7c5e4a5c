/**
 * Migration 014 (customers) on a database that already has keys: every existing key has no
 * customer, so its limiter identity (k:<quota id>) and its orders' owner stay as they were, and
 * its plan and limits are untouched. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { limiterIdentity, orderOwner } from '../../src/keys/api-key.js'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, upgradedStore } from '../helpers/old-database.js'

const INSERT =
  'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, quota_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)'
const KEY = [
  'key_old',
  'legacy',
  'pro',
  300,
  10_000,
  'a'.repeat(64),
  'as_live_Abcd',
  1_700_000_000_000,
  'key_first',
  1_700_000_000_000,
] as const

async function checkMigrated(storage: Storage): Promise<void> {
  const key = await storage.keys.findKeyById('key_old')
  assert.ok(key)
  assert.equal(key.customerId, null)
  assert.deepEqual([key.plan, key.perMinute, key.perDay, key.quotaId], ['pro', 300, 10_000, 'key_first'])
  assert.equal(limiterIdentity(key), 'k:key_first', 'its quota, shared along its rotation chain, as before')
  assert.equal(orderOwner(key), 'k:key_first', 'its orders, as before')
  assert.equal(await storage.customers.findCustomerById('cus_0000000000000000'), undefined)
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 014 on ${engine}: existing keys keep their own quota`, async (t) => {
    const old = await upgradedStore(t, engine, '014', (run) => run(INSERT, KEY))
    if (old) await checkMigrated(old.storage)
  })
}
