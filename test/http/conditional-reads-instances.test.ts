/**
 * Conditional reads across instances: the ETag is made of what this request read from the store,
 * never of a copy this instance kept, so no instance answers 304 to a tag another instance's
 * change outdated. "Another instance" is a second app on the same store (a second connection to
 * the same SQLite file, a second PostgreSQL pool), as in test/orders/cache-freshness.test.ts. With
 * the Redis limiter the 304s are free and the secondary budget counted on every instance alike.
 * The tags are keyed with the database's secret: the same on every instance and after a restart,
 * another on another database.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, openTestApp, type TestApp } from '../helpers/app.js'
import { PG_PATIENCE, PG_URL, REDIS_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'
import { awayFromBoundary } from '../helpers/windows.js'

type Headers = Record<string, string>

const get = (app: TestApp, url: string, headers: Headers) => app.app.inject({ url, headers })
const post = (app: TestApp, url: string, headers: Headers, payload?: unknown) =>
  app.app.inject({
    method: 'POST',
    url,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    payload: payload as string,
  })
const remaining = (res: LightMyRequestResponse) => Number(res.headers['x-ratelimit-remaining'])

/** The reads of pet `petId` and the store, as `reader` tags them. */
async function tags(reader: TestApp, key: Headers, petId: number, orderId?: number): Promise<Record<string, string>> {
  const urls = ['/v1/pets?limit=100', `/v1/pets/${petId}`, '/v1/store/orders', '/v1/store/inventory']
  if (orderId !== undefined) urls.push(`/v1/store/orders/${orderId}`)
  const out: Record<string, string> = {}
  for (const url of urls) {
    // Twice: a page is cached from its second request on (SQLite), so the tag is the cached answer's.
    await get(reader, url, key)
    const res = await get(reader, url, key)
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
    out[url] = res.headers.etag as string
  }
  return out
}

/** Every tag `reader` gave before a change `writer` made answers 304 before it and 200 after it, on `reader`. */
async function staleTagsAnswered(writer: TestApp, reader: TestApp, key: Headers): Promise<void> {
  const petId = (await post(writer, '/v1/pets', key, { name: 'Rex', categoryId: 1, status: 'available' })).json().id
  const before = await tags(reader, key, petId)
  for (const [url, tag] of Object.entries(before))
    assert.equal((await get(reader, url, { ...key, 'if-none-match': tag })).statusCode, 304, `${url} unchanged`)

  const order = await post(writer, '/v1/store/orders', key, { petId })
  assert.equal(order.statusCode, 201)
  for (const [url, tag] of Object.entries(before)) {
    const res = await get(reader, url, { ...key, 'if-none-match': tag })
    assert.equal(res.statusCode, 200, `${url}: the order placed on the other instance outdates the tag`)
    assert.notEqual(res.headers.etag, tag, url)
  }

  const placed = await tags(reader, key, petId, order.json().id)
  assert.equal((await post(writer, `/v1/store/orders/${order.json().id}/cancel`, key)).statusCode, 200)
  // The animal is available again, the order cancelled: every one of these reads changed.
  for (const [url, tag] of Object.entries(placed))
    assert.equal((await get(reader, url, { ...key, 'if-none-match': tag })).statusCode, 200, `${url}: the cancel outdates the tag`)
}

const ENTERPRISE = { plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 } as const

/**
 * Tags keyed with the database's secret: two apps that `open` on one database tag every read
 * alike, and so does one opened after both closed; an app on another database (`openOther`) tags
 * the same answers otherwise.
 */
async function keyedPerDatabase(open: () => Promise<TestApp>, openOther: () => Promise<TestApp>): Promise<void> {
  const apps = [await open(), await open()]
  try {
    const [a, b] = apps as [TestApp, TestApp]
    const key = bearer(await a.key(ENTERPRISE))
    const petId = (await post(a, '/v1/pets', key, { name: 'Rex', categoryId: 1, status: 'available' })).json().id
    const orderId = (await post(a, '/v1/store/orders', key, { petId })).json().id
    const first = await tags(a, key, petId, orderId)
    assert.deepEqual(await tags(b, key, petId, orderId), first, 'every instance tags the same answer alike')
    for (const app of apps.splice(0)) await app.close()

    apps.push(await open(), await openOther())
    const [restarted, other] = apps as [TestApp, TestApp]
    assert.deepEqual(await tags(restarted, key, petId, orderId), first, 'and after a restart')
    // The same animal and order on the other database: the same answers.
    const otherKey = bearer(await other.key(ENTERPRISE))
    const otherPet = (await post(other, '/v1/pets', otherKey, { name: 'Rex', categoryId: 1, status: 'available' })).json().id
    assert.equal((await post(other, '/v1/store/orders', otherKey, { petId: otherPet })).statusCode, 201)
    for (const url of ['/v1/store/inventory', `/v1/pets/${petId}`, '/v1/pets']) {
      const [here, there] = [await get(restarted, url, key), await get(other, url, otherKey)]
      assert.equal(here.body, there.body, url)
      assert.notEqual(here.headers.etag, there.headers.etag, `${url}: another database, another key`)
    }
  } finally {
    for (const app of apps) await app.close()
  }
}

describe('conditional reads across instances', { timeout: 60_000 }, () => {
  test('one SQLite file: the same tags on two apps and after a restart; another file, other tags', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etag-'))
    const open = (name: string) => () =>
      openTestApp({ storage: new SqliteStorage({ databaseUrl: join(dir, name), durability: 'process' }) })
    try {
      await keyedPerDatabase(open('store.db'), open('other.db'))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('one PostgreSQL database: the same tags on two apps and after a restart; another schema, other tags', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schemas = [`etag_${randomBytes(6).toString('hex')}`, `etag_${randomBytes(6).toString('hex')}`]
    const open = (schema: string) => async () =>
      openTestApp({ storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }) })
    try {
      await keyedPerDatabase(open(schemas[0]!), open(schemas[1]!))
    } finally {
      for (const schema of schemas) await dropSchema(schema)
    }
  })

  test('two apps on one SQLite file: a change on one, a 200 to the old tag on the other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etag-'))
    const apps: TestApp[] = []
    try {
      for (let i = 0; i < 2; i++)
        apps.push(await openTestApp({ storage: new SqliteStorage({ databaseUrl: join(dir, 'store.db'), durability: 'process' }) }))
      await staleTagsAnswered(apps[0]!, apps[1]!, bearer(await apps[0]!.key(ENTERPRISE)))
    } finally {
      for (const app of apps) await app.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('two apps on one PostgreSQL database: a change on one, a 200 to the old tag on the other', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `etag_${randomBytes(6).toString('hex')}`
    const apps: TestApp[] = []
    try {
      for (let i = 0; i < 2; i++)
        apps.push(await openTestApp({ storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }) }))
      await staleTagsAnswered(apps[0]!, apps[1]!, bearer(await apps[0]!.key(ENTERPRISE)))
    } finally {
      for (const app of apps) await app.close()
      await dropSchema(schema)
    }
  })

  test('two apps on PostgreSQL and Redis: 304s free on both, the secondary budget shared, stale tags 200', async (t) => {
    if (!(await requireService(t, 'PostgreSQL')) || !(await requireService(t, 'Redis'))) return
    const schema = `etag_${randomBytes(6).toString('hex')}`
    const apps: TestApp[] = []
    try {
      for (let i = 0; i < 2; i++)
        apps.push(
          await openTestApp({ env: { REDIS_URL }, storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }) }),
        )
      const [a, b] = apps as [TestApp, TestApp]
      assert.equal(a.limiter.kind, 'redis')
      await staleTagsAnswered(a, b, bearer(await a.key(ENTERPRISE)))

      // Redis' clock decides the windows: the whole count within one minute.
      await awayFromBoundary(20_000)
      const key = bearer(await a.key({ plan: 'enterprise', perMinute: 2, perDay: 1000 }))
      const first = await get(a, '/v1/store/inventory', key)
      assert.equal(remaining(first), 1)
      const conditional = { ...key, 'if-none-match': first.headers.etag as string }
      // A budget of 20 conditional reads a minute, taken on either instance.
      for (let i = 0; i < 20; i++) {
        const res = await get(i % 2 === 0 ? a : b, '/v1/store/inventory', conditional)
        assert.equal(res.statusCode, 304)
        assert.equal(remaining(res), 1)
      }
      const counted = await get(b, '/v1/store/inventory', conditional)
      assert.equal(counted.statusCode, 304)
      assert.equal(remaining(counted), 0)
      assert.equal((await get(a, '/v1/store/inventory', conditional)).statusCode, 429)
    } finally {
      for (const app of apps) await app.close()
      await dropSchema(schema)
    }
  })
})
