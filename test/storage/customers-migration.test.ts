/**
 * Migration 014 (customers) on a database that already has keys: every existing key has no
 * customer, so its limiter identity (k:<quota id>) and its orders' owner stay as they were, and
 * its plan and limits are untouched. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import { limiterIdentity, orderOwner } from '../../src/keys/api-key.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_URL, requireService } from '../helpers/services.js'

const dirOf = (engine: 'sqlite' | 'postgres') => new URL(`../../src/storage/${engine}/migrations/`, import.meta.url)
/** Every migration before 014, as the previous version applied them. */
const before = (engine: 'sqlite' | 'postgres') =>
  readdirSync(dirOf(engine))
    .filter((f) => f.endsWith('.sql') && f < '014')
    .sort()
const sql = (engine: 'sqlite' | 'postgres', file: string) => readFileSync(new URL(file, dirOf(engine)), 'utf8')

const INSERT =
  'INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, created_at, quota_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
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

test('migration 014 on SQLite: existing keys keep their own quota', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-mig-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'old.db')
  const db = new Database(file)
  db.exec('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
  for (const m of before('sqlite')) {
    db.exec(sql('sqlite', m))
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m, 1)
  }
  db.prepare(INSERT).run(...KEY)
  db.close()
  const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  t.after(() => storage.close())
  await checkMigrated(storage)
})

test('migration 014 on PostgreSQL: existing keys keep their own quota', async (t) => {
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
  for (const m of before('postgres')) {
    await client.query(sql('postgres', m))
    await client.query('INSERT INTO schema_migrations VALUES ($1, 1)', [m])
  }
  let n = 0
  await client.query(
    INSERT.replace(/\?/g, () => `$${++n}`),
    [...KEY],
  )
  const storage = await PostgresStorage.open({ databaseUrl: PG_URL, schema })
  t.after(() => storage.close())
  await checkMigrated(storage)
})
