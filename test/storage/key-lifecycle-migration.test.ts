/**
 * Migration 003 on a database that already has keys (made by the previous version): every key is
 * its own quota (so its limiter state, k:<id>, stays its own), updatedAt is its creation time, and
 * the revocation log carries on as the change log. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_URL, requireService } from '../helpers/services.js'

const OLD = ['001_init.sql', '002_idempotency_keys.sql']
const sql = (engine: 'sqlite' | 'postgres', file: string) =>
  readFileSync(new URL(`../../src/storage/${engine}/migrations/${file}`, import.meta.url), 'utf8')

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
  })
  assert.equal((await storage.keys.findKeyById('key_gone'))?.revokedAt, 1_700_000_100_000)
  // The old revocation entry is in the change log, and new changes follow it.
  const all = await storage.keys.changesSince(0)
  assert.deepEqual(all.hashes, ['b'.repeat(64)])
  await storage.keys.revokeKey('key_old', 1_800_000_000_000)
  assert.deepEqual((await storage.keys.changesSince(all.cursor)).hashes, ['a'.repeat(64)])
  assert.deepEqual(await storage.audit.list({ limit: 10 }), { entries: [], nextAfter: null })
}

test('migration 003 on SQLite keeps existing keys as their own quota', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-mig-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'old.db')
  const db = new Database(file)
  db.exec('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
  for (const m of OLD) {
    db.exec(sql('sqlite', m))
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m, 1)
  }
  db.prepare('INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
    ...KEY,
  )
  db.prepare(
    'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(...REVOKED)
  db.prepare('INSERT INTO key_revocations (key_hash, revoked_at) VALUES (?, ?)').run('b'.repeat(64), REVOKED[8])
  db.close()
  const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  t.after(() => storage.close())
  await checkMigrated(storage)
})

test('migration 003 on PostgreSQL keeps existing keys as their own quota', async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const schema = `test_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  t.after(async () => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  })
  await client.query(`CREATE SCHEMA ${schema}`)
  await client.query(`SET search_path = ${schema}`)
  await client.query('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)')
  for (const m of OLD) {
    await client.query(sql('postgres', m))
    await client.query('INSERT INTO schema_migrations VALUES ($1, 1)', [m])
  }
  await client.query(
    'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
    [...KEY],
  )
  await client.query(
    'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
    [...REVOKED],
  )
  await client.query('INSERT INTO key_revocations (key_hash, revoked_at) VALUES ($1, $2)', ['b'.repeat(64), REVOKED[8]])
  const storage = await PostgresStorage.open({ databaseUrl: PG_URL, schema })
  t.after(() => storage.close())
  await checkMigrated(storage)
})
