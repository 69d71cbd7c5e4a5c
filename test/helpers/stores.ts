import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import pg from 'pg'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_URL, requireService } from './services.js'

/** A store for a test that runs the same assertions on SQLite and on PostgreSQL (a scratch schema). */
export interface StoreEngine {
  name: string
  /** A fresh, empty store, closed (and its schema dropped) after the test; undefined when skipped. */
  open(t: TestContext): Promise<Storage | undefined>
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
    async open(t) {
      const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
      t.after(() => storage.close())
      return storage
    },
  },
  {
    name: 'PostgreSQL',
    async open(t) {
      if (!(await requireService(t, 'PostgreSQL'))) return undefined
      const schema = `test_${randomBytes(6).toString('hex')}`
      const storage = await PostgresStorage.open({ databaseUrl: PG_URL, schema })
      t.after(async () => {
        await storage.close()
        await dropSchema(schema)
      })
      return storage
    },
  },
]
