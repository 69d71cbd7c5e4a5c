/**
 * Migration 008 on a catalogue the previous version left: the inventory's counts start as the
 * animals' (an animal without a status in none), every animal gets version 1, and the triggers
 * keep the counts from then on. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_URL, requireService } from '../helpers/services.js'
import { petVersion } from '../orders/helpers.js'

type Engine = 'sqlite' | 'postgres'
const dir = (engine: Engine) => new URL(`../../src/storage/${engine}/migrations/`, import.meta.url)
const before = (engine: Engine) =>
  readdirSync(dir(engine))
    .filter((f) => f.endsWith('.sql') && f < '008')
    .sort()
const sql = (engine: Engine, file: string) => readFileSync(new URL(file, dir(engine)), 'utf8')

/** The catalogue before the store: 5 available, 2 pending and 3 sold (created so), 2 without a status. */
const STATUSES = ['available', 'pending', 'sold', null, 'available', 'sold', 'available', 'pending', null, 'available', 'sold', 'available']
const INSERT = 'INSERT INTO pets (name, category_id, status) VALUES ($1, 1, $2)'

async function checkMigrated(storage: Storage): Promise<void> {
  assert.deepEqual(await storage.orders.inventory(), { available: 5, pending: 2, sold: 3 })
  for (let id = 1; id <= STATUSES.length; id++) assert.equal(await petVersion(storage, id), 1)
  await storage.pets.createPet({ name: 'new', categoryId: 1, status: 'sold' })
  await storage.pets.createPet({ name: 'new', categoryId: 1 })
  const placed = await storage.orders.placeOrder({ petId: 1, owner: 'k:x', keyId: 'x', now: 0, holdMs: 1 })
  assert.equal(placed.outcome, 'placed')
  assert.deepEqual(await storage.orders.inventory(), { available: 4, pending: 3, sold: 4 })
  // An animal created pending (POST /v1/pets takes any status) is not for sale: no order holds or frees it.
  assert.deepEqual(await storage.orders.placeOrder({ petId: 2, owner: 'k:x', keyId: 'x', now: 0, holdMs: 1 }), {
    outcome: 'not_available',
    petStatus: 'pending',
  })
}

test('migration 008 on SQLite: the counts start as the animals’, versions at 1', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'animal-store-mig-'))
  t.after(() => rmSync(tmp, { recursive: true, force: true }))
  const file = join(tmp, 'old.db')
  const db = new Database(file)
  db.exec('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
  for (const m of before('sqlite')) {
    db.exec(sql('sqlite', m))
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m, 1)
  }
  for (const [i, status] of STATUSES.entries()) db.prepare(INSERT.replace(/\$\d/g, '?')).run(`pet ${i}`, status)
  db.close()
  const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  t.after(() => storage.close())
  await checkMigrated(storage)
})

test('migration 008 on PostgreSQL: the counts start as the animals’, versions at 1', async (t) => {
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
  for (const [i, status] of STATUSES.entries()) await client.query(INSERT, [`pet ${i}`, status])
  const storage = await PostgresStorage.open({ databaseUrl: PG_URL, schema, listenUrl: 'off' })
  t.after(() => storage.close())
  await checkMigrated(storage)
})
