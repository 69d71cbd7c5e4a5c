/**
 * Animals now change (an order moves their status), and every read after an acknowledged change
 * shows it: on the instance that made the change, and on any other at once, however warm their
 * caches of found animals and of pages (src/pets/cached-pet-repository.ts). "Another instance" is
 * a second app on the same store: on SQLite a second connection to the same file (as a worker of
 * `serve --workers 2`, or the CLI), on PostgreSQL a second pool. The bound docs/deployment.md
 * states is this one: the first read after the change's answer.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, openTestApp, type TestApp } from '../helpers/app.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'

type Key = Record<string, string>
const ENTERPRISE = { plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 } as const

const get = (app: TestApp, key: Key, url: string) => app.app.inject({ url, headers: key })
const post = (app: TestApp, key: Key, url: string, payload?: unknown) =>
  app.app.inject({
    method: 'POST',
    url,
    headers: payload === undefined ? key : { ...key, 'content-type': 'application/json' },
    payload: payload as string,
  })

/** Everything a reader may have cached about the animals, read twice (a page is cached from its second request). */
const READS = (id: number) => [
  `/v1/pets/${id}`,
  '/v1/pets?limit=2',
  '/v1/pets?limit=100',
  '/v1/pets?limit=100&status=available',
  '/v1/pets?limit=100&status=pending',
]

async function warm(app: TestApp, key: Key, id: number): Promise<void> {
  for (let i = 0; i < 3; i++) for (const url of READS(id)) assert.equal((await get(app, key, url)).statusCode, 200)
}

/** What `reader` shows of animal `id` right after the change: its status by id, in the pages, and the filtered pages it is (not) in. */
async function seen(reader: TestApp, key: Key, id: number) {
  const inList = async (url: string) =>
    ((await get(reader, key, url)).json() as Array<{ id: number; status?: string }>).find((p) => p.id === id)
  return {
    byId: (await get(reader, key, `/v1/pets/${id}`)).json().status,
    firstPage: (await inList('/v1/pets?limit=2'))?.status,
    list: (await inList('/v1/pets?limit=100'))?.status,
    available: (await inList('/v1/pets?limit=100&status=available')) !== undefined,
    pending: (await inList('/v1/pets?limit=100&status=pending')) !== undefined,
    inventory: (await get(reader, key, '/v1/store/inventory')).json(),
  }
}

/** Orders, completes and cancels through `writer`, reading through `reader` (warm) right after each answer. */
async function changesSeenBy(writer: TestApp, reader: TestApp, key: Key): Promise<void> {
  const first = (await post(writer, key, '/v1/pets', { name: 'Rex', categoryId: 1, status: 'available' })).json()
  const id = (await post(writer, key, '/v1/pets', { name: 'Max', categoryId: 1, status: 'available' })).json().id
  // Two more (without a status: not counted, not for sale), so that the first page of two is full: a page kept until a change.
  for (let i = 0; i < 2; i++) await post(writer, key, '/v1/pets', { name: `Tail ${i}`, categoryId: 1 })
  assert.ok(first.id < id)
  await warm(reader, key, id)
  assert.deepEqual(await seen(reader, key, id), {
    byId: 'available',
    firstPage: 'available',
    list: 'available',
    available: true,
    pending: false,
    inventory: { available: 2, pending: 0, sold: 0 },
  })

  const order = await post(writer, key, '/v1/store/orders', { petId: id })
  assert.equal(order.statusCode, 201)
  assert.deepEqual(await seen(reader, key, id), {
    byId: 'pending',
    firstPage: 'pending',
    list: 'pending',
    available: false,
    pending: true,
    inventory: { available: 1, pending: 1, sold: 0 },
  })

  await warm(reader, key, id)
  assert.equal((await post(writer, key, `/v1/store/orders/${order.json().id}/cancel`)).statusCode, 200)
  assert.equal((await seen(reader, key, id)).byId, 'available')

  await warm(reader, key, id)
  const again = (await post(writer, key, '/v1/store/orders', { petId: id })).json()
  await warm(reader, key, id)
  assert.equal((await post(writer, key, `/v1/store/orders/${again.id}/complete`)).statusCode, 200)
  assert.deepEqual(await seen(reader, key, id), {
    byId: 'sold',
    firstPage: 'sold',
    list: 'sold',
    available: false,
    pending: false,
    inventory: { available: 1, pending: 0, sold: 1 },
  })
}

describe('reads after a change of an animal', { timeout: 60_000 }, () => {
  test('on the instance that made it: at once, caches warm', async () => {
    const app = await openTestApp()
    try {
      await changesSeenBy(app, app, bearer(await app.key(ENTERPRISE)))
    } finally {
      await app.close()
    }
  })

  test('on another instance on the same SQLite file: at once, caches warm', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orders-cache-'))
    const apps: TestApp[] = []
    try {
      for (let i = 0; i < 2; i++)
        apps.push(await openTestApp({ storage: new SqliteStorage({ databaseUrl: join(dir, 'store.db'), durability: 'process' }) }))
      const key = bearer(await apps[0]!.key(ENTERPRISE))
      await changesSeenBy(apps[0]!, apps[1]!, key)
    } finally {
      for (const app of apps) await app.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('on another instance on the same PostgreSQL database: at once', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `cache_${randomBytes(6).toString('hex')}`
    const apps: TestApp[] = []
    try {
      for (let i = 0; i < 2; i++)
        apps.push(await openTestApp({ storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }) }))
      await changesSeenBy(apps[0]!, apps[1]!, bearer(await apps[0]!.key(ENTERPRISE)))
    } finally {
      for (const app of apps) await app.close()
      await dropSchema(schema)
    }
  })
})
