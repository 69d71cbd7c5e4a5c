/**
 * Migration 015 on a store the previous version left: a key made before scopes has all four (it
 * keeps doing what it did), reads back with them, and an update of its scopes is stored. Same
 * assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SCOPES } from '../../src/shared/scopes.js'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, upgradedStore } from '../helpers/old-database.js'

const T = 1_790_000_000_000
const INSERT =
  'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, quota_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)'
const KEY = ['key_old', 'legacy', 'free', 60, 1000, 'd'.repeat(64), 'as_live_Old1', T, 'key_old', T] as const

const RECORDED = {
  audit: [
    {
      at: T + 1,
      actor: { type: 'cli' as const, id: 'test' },
      action: 'key.update' as const,
      keyId: 'key_old',
      details: { changed: ['scopes'] },
      requestId: null,
    },
  ],
}

async function checkMigrated(storage: Storage): Promise<void> {
  const old = await storage.keys.findKeyByHash('d'.repeat(64))
  assert.deepEqual(old?.scopes, [...SCOPES])
  const update = { name: 'legacy', plan: 'free' as const, perMinute: 60, perDay: 1000, expiresAt: null, metadata: null }
  const updated = await storage.keys.updateKey('key_old', T, { ...update, scopes: ['pets:read'], updatedAt: T + 1 }, RECORDED)
  assert.deepEqual(updated?.record.scopes, ['pets:read'])
  assert.deepEqual((await storage.keys.findKeyById('key_old'))?.scopes, ['pets:read'])
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 015 on ${engine}: keys made before scopes have all four`, async (t) => {
    const old = await upgradedStore(t, engine, '015', (run) => run(INSERT, KEY))
    if (old) await checkMigrated(old.storage)
  })
}
