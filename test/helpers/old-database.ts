/**
 * What an upgrade meets: a database that a previous version left at the migrations before a given
 * one, holding rows it wrote, then opened by this version's store (which applies the rest). One
 * setup for every migration test, on both engines.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_PATIENCE, PG_URL, requireService } from './services.js'

export type Engine = 'sqlite' | 'postgres'

/** SQL with `$1`, `$2`… placeholders, run on the old database whatever its engine. */
export type RunSql = (sql: string, values?: readonly unknown[]) => Promise<void>

const dirOf = (engine: Engine) => new URL(`../../src/storage/${engine}/migrations/`, import.meta.url)

/** The migrations of `engine` that come before `version` (`'014'`), in the order they are applied. */
export const migrationsBefore = (engine: Engine, version: string): string[] =>
  readdirSync(dirOf(engine))
    .filter((f) => f.endsWith('.sql') && f < version)
    .sort()

const sqlOf = (engine: Engine, file: string) => readFileSync(new URL(file, dirOf(engine)), 'utf8')

/**
 * A store on a database left at the migrations before `version` (or the ones listed), with the
 * rows `seed` wrote through `run`; `run` stays usable afterwards (a raw statement against what the
 * store made of them). Undefined when PostgreSQL is unreachable (requireService's loud skip).
 * Everything is removed after the test.
 */
export async function upgradedStore(
  t: TestContext,
  engine: Engine,
  before: string | readonly string[],
  seed: (run: RunSql) => Promise<void> | void,
  options: { listen?: boolean } = {},
): Promise<{ storage: Storage; run: RunSql } | undefined> {
  const migrations = typeof before === 'string' ? migrationsBefore(engine, before) : before
  return engine === 'sqlite' ? sqliteStore(t, migrations, seed) : postgresStore(t, migrations, seed, options.listen ?? true)
}

async function sqliteStore(t: TestContext, migrations: readonly string[], seed: (run: RunSql) => Promise<void> | void) {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-mig-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'old.db')
  // A connection per statement: the store holds the file once it is open.
  const run: RunSql = async (sql, values = []) => {
    const db = new Database(file)
    try {
      db.prepare(sql.replace(/\$\d+/g, '?')).run(...values)
    } finally {
      db.close()
    }
  }
  const db = new Database(file)
  db.exec('CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
  for (const m of migrations) {
    db.exec(sqlOf('sqlite', m))
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(m, 1)
  }
  db.close()
  await seed(run)
  const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  t.after(() => storage.close())
  return { storage, run }
}

async function postgresStore(t: TestContext, migrations: readonly string[], seed: (run: RunSql) => Promise<void> | void, listen: boolean) {
  if (!(await requireService(t, 'PostgreSQL'))) return undefined
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
  for (const m of migrations) {
    await client.query(sqlOf('postgres', m))
    await client.query('INSERT INTO schema_migrations VALUES ($1, 1)', [m])
  }
  const run: RunSql = async (sql, values = []) => {
    await client.query(sql, [...values])
  }
  await seed(run)
  const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, ...(listen ? {} : { listenUrl: 'off' }) })
  t.after(() => storage.close())
  return { storage, run }
}
