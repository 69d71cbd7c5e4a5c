/**
 * Migration 011 on a store the previous version left: every admin token made before roles is
 * `admin` (it keeps what it could do), a new one takes the role it is given, and the column
 * refuses any role but the closed list. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_URL, requireService } from '../helpers/services.js'

type Engine = 'sqlite' | 'postgres'
const dir = (engine: Engine) => new URL(`../../src/storage/${engine}/migrations/`, import.meta.url)
const before = (engine: Engine) =>
  readdirSync(dir(engine))
    .filter((f) => f.endsWith('.sql') && f < '011')
    .sort()
const sql = (engine: Engine, file: string) => readFileSync(new URL(file, dir(engine)), 'utf8')

const OLD_TOKEN = ['adm_0000000000000old', 'old ops', 'c'.repeat(64), 'as_admin_Old1', 1_700_000_000_000] as const
const INSERT = 'INSERT INTO admin_tokens (id, name, hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5)'

async function checkMigrated(storage: Storage, forceRole: () => Promise<unknown>): Promise<void> {
  const [old] = await storage.adminTokens.list()
  assert.equal(old?.id, OLD_TOKEN[0])
  assert.equal(old?.role, 'admin')
  assert.equal((await storage.adminTokens.findByHash('c'.repeat(64)))?.role, 'admin')
  const { record } = await createAdminToken(storage.adminTokens, { name: 'viewer', role: 'read' })
  assert.equal((await storage.adminTokens.findByHash(record.hash))?.role, 'read')
  await assert.rejects(forceRole)
}

test('migration 011 on SQLite: existing admin tokens are admin; the role is a closed list', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'animal-store-mig-'))
  t.after(() => rmSync(tmp, { recursive: true, force: true }))
  const file = join(tmp, 'old.db')
  const db = new Database(file)
  db.exec('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
  for (const m of before('sqlite')) {
    db.exec(sql('sqlite', m))
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m, 1)
  }
  db.prepare(INSERT.replace(/\$\d/g, '?')).run(...OLD_TOKEN)
  db.close()
  const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  t.after(() => storage.close())
  await checkMigrated(storage, async () => {
    const raw = new Database(file)
    try {
      raw.prepare("UPDATE admin_tokens SET role = 'owner'").run()
    } finally {
      raw.close()
    }
  })
})

test('migration 011 on PostgreSQL: existing admin tokens are admin; the role is a closed list', async (t) => {
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
  await client.query(INSERT, [...OLD_TOKEN])
  const storage = await PostgresStorage.open({ databaseUrl: PG_URL, schema })
  t.after(() => storage.close())
  await checkMigrated(storage, () => client.query("UPDATE admin_tokens SET role = 'owner'"))
})
