import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import pg from 'pg'
import type { Clock } from '../../src/shared/clock.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_PATIENCE, PG_URL, requireService } from './services.js'

/** A store for a test that runs the same assertions on SQLite and on PostgreSQL (a scratch schema). */
export interface StoreEngine {
  name: string
  /**
   * A fresh, empty store, closed (and its schema dropped) after the test; undefined when skipped.
   * `holdClock` judges orders' holds on both engines (else the system's, and the database's).
   */
  open(t: TestContext, options?: { holdClock?: Clock }): Promise<Storage | undefined>
}

/** Drops a scratch PostgreSQL schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  } finally {
    await client.end()
  }
}

export const STORE_ENGINES: StoreEngine[] = [
  {
    name: 'SQLite',
    async open(t, { holdClock } = {}) {
      const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process', holdClock })
      t.after(() => storage.close())
      return storage
    },
  },
  {
    name: 'PostgreSQL',
    async open(t, { holdClock } = {}) {
      if (!(await requireService(t, 'PostgreSQL'))) return undefined
      const schema = `test_${randomBytes(6).toString('hex')}`
      const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, holdClock })
      t.after(async () => {
        await storage.close()
        await dropSchema(schema)
      })
      return storage
    },
  },
]

/**
 * A PostgreSQL store on a scratch schema and a second connection to the same schema: another
 * instance's transactions, or a reader of what the store wrote. Both closed, the schema dropped,
 * after the test; undefined when skipped.
 */
export async function postgresStoreAndClient(t: TestContext): Promise<{ storage: Storage; client: pg.Client } | undefined> {
  if (!(await requireService(t, 'PostgreSQL'))) return undefined
  const schema = `test_${randomBytes(6).toString('hex')}`
  const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
  await client.connect()
  t.after(async () => {
    await client.end()
    await storage.close()
    await dropSchema(schema)
  })
  return { storage, client }
}
