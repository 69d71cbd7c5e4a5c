/**
 * Migration 003 on a database that already has keys (made by the previous version): every key is
 * its own quota (so its limiter state, k:<id>, stays its own), updatedAt is its creation time, and
 * the revocation log carries on as the change log. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, upgradedStore } from '../helpers/old-database.js'

const OLD = ['001_init.sql', '002_idempotency_keys.sql']

const KEY = ['key_old', 'legacy', 'pro', 300, 10_000, 'a'.repeat(64), 'as_live_Abcd', 1_700_000_000_000] as const
const REVOKED = ['key_gone', 'gone', 'free', 60, 1000, 'b'.repeat(64), 'as_live_Efgh', 1_700_000_000_001, 1_700_000_100_000] as const

async function checkMigrated(storage: Storage): Promise<void> {
  const key = await storage.keys.findKeyById('key_old')
  assert.deepEqual(key, {
    id: 'key_old',
    name: 'legacy',
    plan: 'pro',
    perMinute: 300,
    perDay: 10_000,
    hash: 'a'.repeat(64),
    prefix: 'as_live_Abcd',
    quotaId: 'key_old',
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    expiresAt: null,
    revokedAt: null,
    rotatedTo: null,
    rotatedFrom: null,
    metadata: null,
    lastUsedAt: null,
    customerId: null,
    scopes: ['pets:read', 'pets:write', 'orders:read', 'orders:write'],
  })
  assert.equal((await storage.keys.findKeyById('key_gone'))?.revokedAt, 1_700_000_100_000)
  // The old revocation entry is in the change log, and new changes follow it.
  const all = await storage.keys.changesSince(0)
  assert.deepEqual(all.hashes, ['b'.repeat(64)])
  await storage.keys.revokeKey('key_old', 1_800_000_000_000)
  assert.deepEqual((await storage.keys.changesSince(all.cursor)).hashes, ['a'.repeat(64)])
  assert.deepEqual(await storage.audit.list({ limit: 10 }), { entries: [], nextAfter: null })
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 003 on ${engine} keeps existing keys as their own quota`, async (t) => {
    const old = await upgradedStore(t, engine, OLD, async (run) => {
      await run(
        'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
        KEY,
      )
      await run(
        'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        REVOKED,
      )
      await run('INSERT INTO key_revocations (key_hash, revoked_at) VALUES ($1, $2)', ['b'.repeat(64), REVOKED[8]])
    })
    if (old) await checkMigrated(old.storage)
  })
}
