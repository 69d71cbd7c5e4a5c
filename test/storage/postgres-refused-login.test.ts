/**
 * PostgreSQL refusing the service's own connections after it started: its login turned off
 * (28000) or its database dropped (3D000). Neither is the request's fault, and /readyz says 503:
 * writes and reads answer 503 `service_unavailable` with Retry-After, as every other database
 * outage does (not a 500). On the machine's server, with a role and a database made for the test
 * and removed after it; nothing else on the server is touched.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, type TestContext, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { READINESS_MAX_AGE_MS } from '../../src/ops/readiness.js'
import { StorageUnavailableError } from '../../src/shared/outages.js'
import { isUnavailable } from '../../src/storage/postgres/connection.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { bearer, buildTestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'
import { PG_URL, requireService } from '../helpers/services.js'

/** One statement as the test URL's user (the server's superuser). */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** PG_URL as `user` on `database`. */
function urlAs({ user, database }: { user?: string; database?: string }): string {
  const url = new URL(PG_URL)
  if (user !== undefined) url.username = user
  if (database !== undefined) url.pathname = `/${database}`
  return url.toString()
}

/** An app on `storage` with a key, its pooled connections in use; the requests the test sends after the refusal. */
async function serving(t: TestContext, storage: PostgresStorage) {
  const app = await buildTestApp(t, { storage })
  const key = bearer(await app.key({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 }))
  const write = () => app.app.inject({ method: 'POST', url: '/v1/pets', headers: key, payload: { name: 'Rex', categoryId: 1 } })
  const read = () => app.app.inject({ url: '/v1/store/orders', headers: key })
  assert.equal((await write()).statusCode, 201)
  assert.equal((await read()).statusCode, 200)
  /** /readyz after its cache of the last check ran out: the database is down. */
  const notReady = async () => {
    await new Promise((resolve) => setTimeout(resolve, READINESS_MAX_AGE_MS + 50))
    const ready = await app.app.inject({ url: '/readyz' })
    assert.equal(ready.statusCode, 503, ready.body)
    assert.equal(ready.json().checks.database.status, 'down')
  }
  return { write, read, notReady }
}

/** Every answer after the refusal: 503 `service_unavailable` with Retry-After, never a 500. */
function assertOutage(res: LightMyRequestResponse, what: string): void {
  assert.notEqual(res.statusCode, 500, `${what}: ${res.body}`)
  assertError(res, 503, 'service_unavailable', /^The database is unavailable; retry shortly$/)
  assert.ok(Number(res.headers['retry-after']) > 0, `${what}: Retry-After`)
}

describe('PostgreSQL refuses the service after it started', { timeout: 60_000 }, () => {
  test('the SQLSTATEs of a refused login and of a missing database are outages', () => {
    for (const code of ['28000', '28P01', '3D000']) assert.equal(isUnavailable(Object.assign(new Error('refused'), { code })), true, code)
  })

  test('its role may no longer log in (28000): writes and reads are 503 with Retry-After', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const role = `i40_login_${randomBytes(5).toString('hex')}`
    // A database of its own, owned by the role: nothing of the server's test database changes.
    await admin(`CREATE ROLE ${role} LOGIN`)
    t.after(async () => {
      await admin(`DROP DATABASE IF EXISTS ${role} WITH (FORCE)`)
      await admin(`DROP ROLE IF EXISTS ${role}`)
    })
    await admin(`CREATE DATABASE ${role} OWNER ${role}`)
    const storage = await PostgresStorage.open({ databaseUrl: urlAs({ user: role, database: role }), listenUrl: 'off' })
    const { write, read, notReady } = await serving(t, storage)

    // The server turns the role's login off, and its open connections go (as a restart or a failover would end them).
    await admin(`ALTER ROLE ${role} NOLOGIN`)
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`)
    // The first query may meet a connection the server just ended (an outage already); the next ones open new connections.
    for (let i = 0; i < 3; i++) {
      assertOutage(await write(), `write ${i}`)
      assertOutage(await read(), `read ${i}`)
    }
    await notReady()
    await assert.rejects(storage.orders.listOrders({ limit: 1 }), (error: unknown) => {
      assert.ok(error instanceof StorageUnavailableError, String(error))
      assert.match((error as Error).message, /not permitted to log in/)
      return true
    })
  })

  test('its database is gone (3D000): writes and reads are 503 with Retry-After', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const database = `i40_db_${randomBytes(5).toString('hex')}`
    await admin(`CREATE DATABASE ${database}`)
    t.after(() => admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
    const storage = await PostgresStorage.open({ databaseUrl: urlAs({ database }), listenUrl: 'off' })
    const { write, read, notReady } = await serving(t, storage)

    // Dropped under the service: FORCE ends its connections, and new ones find no database.
    await admin(`DROP DATABASE ${database} WITH (FORCE)`)
    for (let i = 0; i < 3; i++) {
      assertOutage(await write(), `write ${i}`)
      assertOutage(await read(), `read ${i}`)
    }
    await notReady()
    await assert.rejects(storage.orders.listOrders({ limit: 1 }), (error: unknown) => {
      assert.ok(error instanceof StorageUnavailableError, String(error))
      assert.match((error as Error).message, /does not exist/)
      return true
    })
  })
})
