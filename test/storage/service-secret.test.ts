/**
 * The service's secret (storage/service-secret.ts, migration 019): made once per database by the
 * first start that finds none, 256 random bits, the same for every store opened on that database
 * (also several opening a new one at once) and after a restart; another database has another.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'

const SECRET = /^[A-Za-z0-9_-]{43}$/

async function closeAll(stores: Storage[]): Promise<void> {
  for (const store of stores) await store.close()
}

describe('the service secret', () => {
  test('SQLite: one per file, kept across a restart; another file or memory, another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'service-secret-'))
    const open = (name: string) => new SqliteStorage({ databaseUrl: join(dir, name), durability: 'process' })
    const stores: Storage[] = []
    try {
      stores.push(open('store.db'), open('store.db'))
      const [a, b] = stores as [Storage, Storage]
      assert.match(a.serviceSecret, SECRET)
      assert.equal(b.serviceSecret, a.serviceSecret)
      await closeAll(stores.splice(0))
      stores.push(open('store.db'), open('other.db'), new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' }))
      const [restarted, other, memory] = stores as [Storage, Storage, Storage]
      assert.equal(restarted.serviceSecret, a.serviceSecret, 'the same after a restart')
      assert.notEqual(other.serviceSecret, a.serviceSecret)
      assert.notEqual(memory.serviceSecret, a.serviceSecret)
      assert.match(memory.serviceSecret, SECRET)
    } finally {
      await closeAll(stores)
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('PostgreSQL: instances opening a new database at once all keep the one secret; another schema, another', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const [schema, otherSchema] = [`secret_${randomBytes(6).toString('hex')}`, `secret_${randomBytes(6).toString('hex')}`]
    const stores: Storage[] = []
    try {
      const open = (s: string) => PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema: s, poolSize: 1, listenUrl: 'off' })
      stores.push(...(await Promise.all([open(schema), open(schema), open(schema)])))
      const secrets = new Set(stores.map((s) => s.serviceSecret))
      assert.equal(secrets.size, 1, 'one secret for all')
      const [secret] = secrets
      assert.match(secret!, SECRET)
      await closeAll(stores.splice(0))
      stores.push(await open(schema), await open(otherSchema))
      assert.equal(stores[0]!.serviceSecret, secret, 'the same after a restart')
      assert.notEqual(stores[1]!.serviceSecret, secret)
    } finally {
      await closeAll(stores)
      await dropSchema(schema)
      await dropSchema(otherSchema)
    }
  })
})
