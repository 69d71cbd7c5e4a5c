/**
 * Migration 007 on a database with Idempotency-Key records written per API key (by the previous
 * version): a record of a rotated key's successor moves to its chain's quota id, so a retry (now
 * scoped by quota) still replays it; where the chain had two records under one Idempotency-Key,
 * the quota's own one is kept, else the oldest. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { IdempotencyClaim } from '../../src/idempotency/claim.js'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, upgradedStore } from '../helpers/old-database.js'

const T = 1_790_000_000_000
/** A chain A -> B -> C (quota A), and Z, a key of its own. */
const KEYS: Array<[id: string, quota: string]> = [
  ['key_chainA', 'key_chainA'],
  ['key_chainB', 'key_chainA'],
  ['key_chainC', 'key_chainA'],
  ['key_alone', 'key_alone'],
]
/** Per-key records: [key id, Idempotency-Key, pet id, created at]. */
const RECORDS: Array<[string, string, number, number]> = [
  ['key_chainB', 'by-successor', 1, T + 10],
  ['key_chainA', 'both', 2, T + 20], // the quota's own record: kept
  ['key_chainB', 'both', 3, T + 5],
  ['key_chainB', 'twice', 4, T + 30],
  ['key_chainC', 'twice', 5, T + 25], // the oldest of the two: kept
  ['key_alone', 'mine', 6, T + 1],
]
const FINGERPRINT = 'f'.repeat(64)

const rows = () => [
  ...KEYS.map(([id, quota], i) => ({
    sql: 'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, quota_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    values: [id, id, 'free', 60, 1000, String(i).repeat(64), 'as_live_Abcd', T, quota, T],
  })),
  // Ids 1 to 6, in order, on both engines (PostgreSQL's identity column takes no id).
  ...RECORDS.map(([, , pet]) => ({ sql: 'INSERT INTO pets (name, category_id, status) VALUES ($1, 1, NULL)', values: [`pet ${pet}`] })),
  ...RECORDS.map(([keyId, key, pet, at]) => ({
    sql: 'INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, pet_id, created_at) VALUES ($1, $2, $3, $4, $5)',
    values: [keyId, key, FINGERPRINT, pet, at],
  })),
]

async function checkMigrated(storage: Storage): Promise<void> {
  const replay = async (scope: string, key: string) => {
    const claim: IdempotencyClaim = { scope, key, fingerprint: FINGERPRINT, createdAt: T + 100 }
    const result = await storage.pets.createPetOnce({ name: 'retry', categoryId: 1 }, claim)
    return result.outcome === 'replayed' ? result.pet.id : result.outcome
  }
  assert.equal(await replay('key_chainA', 'by-successor'), 1, "a successor's record, now under its quota")
  assert.equal(await replay('key_chainA', 'both'), 2, "the quota's own record kept")
  assert.equal(await replay('key_chainA', 'twice'), 5, 'the oldest kept')
  assert.equal(await replay('key_alone', 'mine'), 6, 'a key of its own: as it was')
  assert.equal((await storage.pets.listPets({ limit: 100 })).length, 6, 'no animal created by the retries')
  // The records left under their key ids are swept like any other.
  assert.equal(await storage.pets.deleteIdempotencyRecords(T + 50), RECORDS.length)
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 007 on ${engine}: the records of a rotated key move to its quota and keep replaying`, async (t) => {
    const old = await upgradedStore(
      t,
      engine,
      '007',
      async (run) => {
        for (const row of rows()) await run(row.sql, row.values)
      },
      { listen: false },
    )
    if (old) await checkMigrated(old.storage)
  })
}
