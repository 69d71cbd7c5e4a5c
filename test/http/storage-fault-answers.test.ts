/**
 * A store that cannot write (issue 28, item 6): the write is 503 `service_unavailable` in the Error
 * shape with Retry-After (the client retries), logged as a storage fault; /readyz says not ready,
 * naming the fault, until a write goes through again; reads go on meanwhile. Real SQLite
 * conditions on the store's own connection (a read-only connection, a size limit); the full disk
 * of a real server is test/system/storage/full-disk.test.ts.
 */
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { type TestContext, test } from 'node:test'
import type Database from 'better-sqlite3'
import { pino } from 'pino'
import { READINESS_MAX_AGE_MS } from '../../src/ops/readiness.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildTestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function appOnSqlite(context: TestContext) {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      callback()
    },
  })
  const t = await buildTestApp(context, { storage, logger: pino({ level: 'info' }, sink) })
  // The store's own connection: what a full disk or a read-only mount does to it, SQLite does on demand.
  const db = (storage as unknown as { db: Database.Database }).db
  const key = bearer(await t.key({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 }))
  const create = () => t.app.inject({ method: 'POST', url: '/v1/pets', headers: key, payload: { name: 'Rex', categoryId: 1 } })
  return { t, db, key, create, lines }
}

test('a write the store refuses (read-only) is 503 with Retry-After; /readyz is not ready until a write succeeds again', async (context) => {
  const { t, db, key, create, lines } = await appOnSqlite(context)
  assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 200)
  db.pragma('query_only = ON')
  const refused = await create()
  assertError(refused, 503, 'service_unavailable', /^The database is unavailable; retry shortly$/)
  assert.equal(refused.headers['retry-after'], '1')
  const logged = lines.find((l) => l.msg === 'storage fault')
  assert.equal(logged?.fault, 'read_only', 'an operator learns of it from the log')
  assert.equal((await t.app.inject({ url: '/v1/pets', headers: key })).statusCode, 200, 'reads go on')

  await sleep(READINESS_MAX_AGE_MS + 50)
  for (const app of [t.app, await t.admin()]) {
    const ready = await app.inject({ url: '/readyz' })
    assert.equal(ready.statusCode, 503)
    assert.deepEqual(ready.json(), {
      status: 'unavailable',
      checks: { database: { engine: 'sqlite', status: 'down', reason: 'read_only' }, rateLimiter: { store: 'memory', status: 'up' } },
    })
  }

  db.pragma('query_only = OFF')
  await sleep(READINESS_MAX_AGE_MS + 50)
  assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 200, "readiness's own write went through")
  assert.equal((await create()).statusCode, 201)
})

test('a full database (its size limit reached) is 503 on writes, never a 500', async (context) => {
  const { db, create } = await appOnSqlite(context)
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`)
  let res = await create()
  for (let i = 0; i < 500 && res.statusCode === 201; i++) res = await create()
  assertError(res, 503, 'service_unavailable')
  assert.equal(res.headers['retry-after'], '1')
})
