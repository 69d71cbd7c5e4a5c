/**
 * Migration 018 on a database with Idempotency-Key records written per rotation chain (by the
 * previous version): a record of a customer's key moves to the customer, so a retry in flight at
 * the upgrade (now scoped per customer, through any of its keys) still replays; where two chains of
 * the customer had a record under one Idempotency-Key, the oldest is kept; a key without a customer
 * keeps its records as they were. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { IdempotencyClaim } from '../../src/idempotency/claim.js'
import { idempotencyScope } from '../../src/idempotency/scope.js'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, upgradedStore } from '../helpers/old-database.js'

const T = 1_790_000_000_000
/** Customer A: a chain c1 -> c2 (quota c1) and a key c3 of its own; customer B: key b; key plain: no customer. */
const KEYS: Array<[id: string, quota: string, customer: string | null]> = [
  ['key_c1', 'key_c1', 'cus_A'],
  ['key_c2', 'key_c1', 'cus_A'],
  ['key_c3', 'key_c3', 'cus_A'],
  ['key_b', 'key_b', 'cus_B'],
  ['key_plain', 'key_plain', null],
]
/** Records under each chain's quota id: [quota id, Idempotency-Key, pet id, created at]. */
const RECORDS: Array<[string, string, number, number]> = [
  ['key_c1', 'in-flight', 1, T + 10],
  ['key_c1', 'both', 2, T + 20],
  ['key_c3', 'both', 3, T + 5], // the oldest of the customer's two: kept
  ['key_b', 'theirs', 4, T + 1],
  ['key_plain', 'mine', 5, T + 2],
]
const FINGERPRINT = 'f'.repeat(64)

const rows = () => [
  ...['cus_A', 'cus_B'].map((id) => ({
    sql: 'INSERT INTO customers (id, name, plan, per_minute, per_day, metadata, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)',
    values: [id, id, 'pro', 300, 10_000, T, T],
  })),
  ...KEYS.map(([id, quota, customer], i) => ({
    sql: 'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, quota_id, updated_at, customer_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
    values: [id, id, 'pro', 300, 10_000, String(i).repeat(64), 'as_live_Abcd', T, quota, T, customer],
  })),
  // Ids 1 to 5, in order, on both engines (PostgreSQL's identity column takes no id).
  ...RECORDS.map(([, , pet]) => ({ sql: 'INSERT INTO pets (name, category_id, status) VALUES ($1, 1, NULL)', values: [`pet ${pet}`] })),
  ...RECORDS.map(([quota, key, pet, at]) => ({
    sql: 'INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, pet_id, created_at) VALUES ($1, $2, $3, $4, $5)',
    values: [quota, key, FINGERPRINT, pet, at],
  })),
]

/** The scope this version computes for a request with the key (`idempotencyScope`), not one spelled here. */
const scopeOf = (id: string) => {
  const [, quotaId, customerId] = KEYS.find(([k]) => k === id)!
  return idempotencyScope({ quotaId, customerId })
}

async function checkMigrated(storage: Storage): Promise<void> {
  const replay = async (keyId: string, key: string) => {
    const claim: IdempotencyClaim = { scope: scopeOf(keyId), key, fingerprint: FINGERPRINT, createdAt: T + 100 }
    const result = await storage.pets.createPetOnce({ name: 'retry', categoryId: 1 }, claim)
    return result.outcome === 'replayed' ? result.pet.id : result.outcome
  }
  for (const keyId of ['key_c1', 'key_c2', 'key_c3'])
    assert.equal(await replay(keyId, 'in-flight'), 1, `a record of the customer's chain, now the customer's: through ${keyId}`)
  assert.equal(await replay('key_c2', 'both'), 3, 'the oldest of two kept')
  assert.equal(await replay('key_b', 'theirs'), 4, "another customer's record, now that customer's")
  assert.equal(await replay('key_plain', 'mine'), 5, 'a key without a customer: as it was')
  assert.equal((await storage.pets.listPets({ limit: 100 })).length, RECORDS.length, 'no animal created by the retries')
  // The record left under its quota id is swept like any other.
  assert.equal(await storage.pets.deleteIdempotencyRecords(T + 50), RECORDS.length)
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 018 on ${engine}: the records of a customer's keys move to the customer and keep replaying`, async (t) => {
    const old = await upgradedStore(
      t,
      engine,
      '018',
      async (run) => {
        for (const row of rows()) await run(row.sql, row.values)
      },
      { listen: false },
    )
    if (old) await checkMigrated(old.storage)
  })
}
