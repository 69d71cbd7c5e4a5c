/**
 * The expiry of holds: the sweep app.ts starts on its own timer, and the sweep of several
 * instances at once on one database releasing each hold exactly once (three apps on one
 * PostgreSQL database, each with its own pool; two on one SQLite file, each with its own
 * connection, as the workers of `serve --workers 2`).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/shared/clock.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, openTestApp, TEST_NOW, type TestApp } from '../helpers/app.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'
import { waitFor } from '../helpers/wait.js'
import { invariantProblems, petVersion } from './helpers.js'

const ENV = { ORDER_HOLD_MINUTES: '1', ORDER_SWEEP_MS: '600000' }
const HOLDS = 120

/** `count` animals ordered through the apps in turn; their ids. */
async function holds(apps: TestApp[], key: Record<string, string>, count = HOLDS): Promise<number[]> {
  const pets: number[] = []
  for (let i = 0; i < count; i++) {
    const app = apps[i % apps.length]!
    const post = (url: string, payload: unknown) =>
      app.app.inject({ method: 'POST', url, headers: { ...key, 'content-type': 'application/json' }, payload: payload as string })
    const pet = (await post('/v1/pets', { name: `Rex ${i}`, categoryId: 1, status: 'available' })).json()
    assert.equal((await post('/v1/store/orders', { petId: pet.id })).statusCode, 201)
    pets.push(pet.id)
  }
  return pets
}

/** Every app sweeps at once, twice over; each hold must be released by exactly one of those runs. */
async function sweepTogether(apps: TestApp[], pets: number[]): Promise<number[]> {
  for (const app of apps) (app.clock as ManualClock).advance(60_000)
  const counts: number[] = []
  for (let pass = 0; pass < 2; pass++) counts.push(...(await Promise.all(apps.map((app) => app.domain.jobs.orderExpiry.run()))))
  assert.equal(
    counts.reduce((a, b) => a + b, 0),
    pets.length,
    `each hold released once in all: ${counts.join(' + ')}`,
  )
  const storage = apps[0]!.storage
  for (const id of pets) assert.equal(await petVersion(storage, id), 3, `animal ${id}: created, held, released: no second release`)
  assert.equal((await storage.orders.listOrders({ limit: 1000, status: 'expired' })).length, pets.length)
  assert.equal((await storage.orders.listOrders({ limit: 1000, status: 'placed' })).length, 0)
  assert.deepEqual(await invariantProblems(storage), [])
  assert.equal((await storage.orders.inventory()).available, pets.length)
  return counts
}

describe('the expiry of holds', { timeout: 120_000 }, () => {
  test('the sweep runs by itself every ORDER_SWEEP_MS (started with the app)', async () => {
    const app = await openTestApp({ env: { ORDER_HOLD_MINUTES: '1', ORDER_SWEEP_MS: '100' } })
    try {
      const key = bearer(await app.key({ plan: 'pro' }))
      const [pet] = await holds([app], key, 1)
      ;(app.clock as ManualClock).advance(60_000)
      const freed = await waitFor(async () => (await app.storage.pets.getPet(pet!))?.status === 'available', 10_000)
      assert.ok(freed, 'the timer expired the hold without any request')
      assert.equal((await app.storage.orders.listOrders({ limit: 10, status: 'placed' })).length, 0)
    } finally {
      await app.close()
    }
  })

  test('two processes on one SQLite file (two connections) sweeping at once release each hold once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orders-expiry-'))
    const file = join(dir, 'store.db')
    const apps: TestApp[] = []
    try {
      for (let i = 0; i < 2; i++) {
        const clock = new ManualClock(TEST_NOW)
        apps.push(
          await openTestApp({
            env: ENV,
            clock,
            storage: new SqliteStorage({ databaseUrl: file, durability: 'process', holdClock: clock }),
          }),
        )
      }
      const key = bearer(await apps[0]!.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
      const counts = await sweepTogether(apps, await holds(apps, key))
      process.stdout.write(`SQLite, 2 connections: ${HOLDS} holds released by runs of ${counts.join(', ')}\n`)
    } finally {
      for (const app of apps) await app.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('three instances on one PostgreSQL database sweeping at once release each hold once', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `expiry_${randomBytes(6).toString('hex')}`
    const apps: TestApp[] = []
    try {
      // Each app's clock judges its store's holds too (holdClock), so that the test can run the holds out.
      for (let i = 0; i < 3; i++) {
        const clock = new ManualClock(TEST_NOW)
        apps.push(
          await openTestApp({
            env: ENV,
            clock,
            storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, holdClock: clock }),
          }),
        )
      }
      const key = bearer(await apps[0]!.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
      const counts = await sweepTogether(apps, await holds(apps, key))
      process.stdout.write(`PostgreSQL, 3 instances: ${HOLDS} holds released by runs of ${counts.join(', ')}\n`)
    } finally {
      for (const app of apps) await app.close()
      await dropSchema(schema)
    }
  })
})
