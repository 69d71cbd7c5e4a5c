/**
 * The keys list's order and cursor (KeyRepository.pageKeys), on both engines: newest first (created_at,
 * then id, descending; issue 32), keyset-paged on (created_at, id) with the last key's id as `after`.
 * Keys created in the same millisecond, ids in mixed case (byte order on both engines), filters:
 * followed page by page, every key listed once, in order; a key created while paging appears on no
 * later page.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, type TestContext, test } from 'node:test'
import type { ApiKeyRecord } from '../../src/keys/api-key.js'
import type { KeyPageFilter, KeyRepository } from '../../src/keys/repository.js'
import { ALL_SCOPES } from '../../src/shared/scopes.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'

const T0 = 1_790_000_000_000
const NOW = T0 + 1_000_000

/** 37 keys: three to a millisecond, ids in mixed case, plans, names and states varied. */
const KEYS: ApiKeyRecord[] = Array.from({ length: 37 }, (_, i) => {
  const id = `key_${i % 2 === 0 ? 'A' : 'a'}${String((i * 7) % 37).padStart(2, '0')}`
  return {
    id,
    name: i % 3 === 0 ? `Acme ${i}` : `Other ${i}`,
    plan: i % 4 === 0 ? 'free' : 'pro',
    perMinute: 60,
    perDay: 1000,
    hash: randomBytes(32).toString('hex'),
    prefix: 'as_test_abcd',
    quotaId: id,
    createdAt: T0 + Math.floor(i / 3),
    updatedAt: T0 + Math.floor(i / 3),
    expiresAt: i % 5 === 0 ? T0 + 10 : null,
    revokedAt: i % 7 === 0 ? T0 + 20 : null,
    rotatedTo: null,
    rotatedFrom: null,
    metadata: null,
    lastUsedAt: null,
    customerId: null,
    scopes: [...ALL_SCOPES],
  }
})

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const newestFirst = (a: ApiKeyRecord, b: ApiKeyRecord) => b.createdAt - a.createdAt || byteOrder(b.id, a.id)

const ENGINES: Array<{ name: string; open(t: TestContext): Promise<KeyRepository | undefined> }> = [
  {
    name: 'SQLite',
    async open(t) {
      const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
      t.after(() => storage.close())
      return storage.keys
    },
  },
  {
    name: 'PostgreSQL',
    async open(t) {
      if (!(await requireService(t, 'PostgreSQL'))) return undefined
      const schema = `test_${randomBytes(6).toString('hex')}`
      const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, listenUrl: 'off' })
      t.after(async () => {
        await storage.close()
        await dropSchema(schema)
      })
      return storage.keys
    },
  },
]

/** Every page of a filter, `size` rows a page, as the key service asks (one more than a page). */
async function walk(keys: KeyRepository, filter: Omit<KeyPageFilter, 'limit' | 'now'>, size: number, between?: () => Promise<void>) {
  const listed: string[] = []
  let after: string | undefined
  for (let page = 0; page <= KEYS.length; page++) {
    const rows = await keys.pageKeys({ ...filter, after, limit: size + 1, now: NOW })
    listed.push(...rows.slice(0, size).map((r) => r.id))
    if (rows.length <= size) return listed
    after = rows[size - 1]!.id
    await between?.()
  }
  assert.fail('the pages end')
}

for (const engine of ENGINES) {
  describe(`keys list paging on ${engine.name}`, () => {
    test('newest first, keyset-paged on (created_at, id): every key once, in order, with any filter', async (t) => {
      const keys = await engine.open(t)
      if (keys === undefined) return
      // Inserted in a shuffled order: the order listed is the store's, not the insertion's.
      for (const k of [...KEYS].sort((a, b) => byteOrder(a.hash, b.hash))) await keys.insertKey(k)
      const filters: Array<Omit<KeyPageFilter, 'limit' | 'now'>> = [
        {},
        { plan: 'free' },
        { name: 'acme' },
        { state: 'active' },
        { state: 'expired' },
        { state: 'revoked' },
        { plan: 'pro', name: 'other', state: 'active' },
      ]
      for (const filter of filters) {
        const expected = KEYS.filter((k) => {
          if (filter.plan !== undefined && k.plan !== filter.plan) return false
          if (filter.name !== undefined && !k.name.toLowerCase().includes(filter.name)) return false
          const state = k.revokedAt !== null ? 'revoked' : k.expiresAt !== null && k.expiresAt <= NOW ? 'expired' : 'active'
          return filter.state === undefined || state === filter.state
        })
          .sort(newestFirst)
          .map((k) => k.id)
        assert.ok(expected.length > 0, JSON.stringify(filter))
        for (const size of [1, 2, 5, 100])
          assert.deepEqual(await walk(keys, filter, size), expected, `${JSON.stringify(filter)} by ${size}`)
      }
    })

    test('a key created while paging is on no later page; the walk still lists every older key once', async (t) => {
      const keys = await engine.open(t)
      if (keys === undefined) return
      for (const k of KEYS) await keys.insertKey(k)
      let n = 0
      const listed = await walk(keys, {}, 4, async () => {
        n++
        await keys.insertKey({
          ...KEYS[0]!,
          id: `key_new${n}`,
          quotaId: `key_new${n}`,
          hash: randomBytes(32).toString('hex'),
          createdAt: NOW + n,
        })
      })
      assert.ok(n > 0)
      assert.deepEqual(
        listed,
        [...KEYS].sort(newestFirst).map((k) => k.id),
      )
      const first = await keys.pageKeys({ limit: 1, now: NOW })
      assert.equal(first[0]?.id, `key_new${n}`, 'the newest key heads the list')
    })
  })
}
