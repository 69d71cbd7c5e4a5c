/**
 * Orders under concurrency, in this process: 40 orders at once for one animal are one 201 and 39
 * 409s, on SQLite (one app, many requests in flight) and on PostgreSQL (three apps on one
 * database, each with its own pool, as three instances); and the changes that race for one placed
 * order (cancel, complete, the sweep) end it once. Repeated over fresh animals; the stores'
 * invariants are checked after each round. The same across real processes: test/system/orders/.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { ManualClock } from '../../src/shared/clock.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { bearer, openTestApp, TEST_NOW, type TestApp } from '../helpers/app.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'
import { invariantProblems, petVersion, rawQuery } from './helpers.js'

const ORDERS_AT_ONCE = 40
const ROUNDS = 10
const ENTERPRISE = { plan: 'enterprise', perMinute: 1_000_000, perDay: 10_000_000 } as const

/** Status and code of each answer, counted. */
function tally(answers: LightMyRequestResponse[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const res of answers) {
    const label = res.statusCode === 201 || res.statusCode === 200 ? String(res.statusCode) : `${res.statusCode} ${res.json().code}`
    counts[label] = (counts[label] ?? 0) + 1
  }
  return counts
}

/** Apps on one store (one for SQLite in memory; three pools on one PostgreSQL schema), with a key each can use. */
interface Cluster {
  apps: TestApp[]
  key: Record<string, string>
}

async function sqliteCluster(): Promise<Cluster> {
  const app = await openTestApp()
  return { apps: [app], key: bearer(await app.key(ENTERPRISE)) }
}

async function postgresCluster(schema: string): Promise<Cluster> {
  const apps: TestApp[] = []
  // Each app's clock judges its store's holds too (holdClock), so that the test can run a hold out.
  for (let i = 0; i < 3; i++) {
    const clock = new ManualClock(TEST_NOW)
    apps.push(
      await openTestApp({ clock, storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, holdClock: clock }) }),
    )
  }
  return { apps, key: bearer(await apps[0]!.key(ENTERPRISE)) }
}

const post = (app: TestApp, url: string, key: Record<string, string>, payload?: unknown) =>
  app.app.inject({
    method: 'POST',
    url,
    headers: payload === undefined ? key : { ...key, 'content-type': 'application/json' },
    payload: payload as string,
  })

async function ordersForOneAnimal({ apps, key }: Cluster): Promise<Record<string, number>[]> {
  const rounds: Record<string, number>[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const pet = (await post(apps[0]!, '/v1/pets', key, { name: `Rex ${round}`, categoryId: 1, status: 'available' })).json()
    const answers = await Promise.all(
      Array.from({ length: ORDERS_AT_ONCE }, (_, i) => post(apps[i % apps.length]!, '/v1/store/orders', key, { petId: pet.id })),
    )
    const counts = tally(answers)
    rounds.push(counts)
    assert.deepEqual(counts, { '201': 1, '409 pet_not_available': ORDERS_AT_ONCE - 1 }, `round ${round}`)
    for (const res of answers.filter((r) => r.statusCode === 409)) assert.match(res.json().message, /it is pending/)
    const winner = answers.find((r) => r.statusCode === 201)!.json()
    assert.equal(winner.petId, pet.id)
    assert.deepEqual(await invariantProblems(apps[0]!.storage), [])
  }
  return rounds
}

/** Cancel, complete and the sweep at once on each of a few due orders: each ends once, and its animal moves once. */
async function racesForOneOrder({ apps, key }: Cluster): Promise<Record<string, number>> {
  const outcomes: Record<string, number> = {}
  for (let round = 0; round < ROUNDS; round++) {
    const pet = (await post(apps[0]!, '/v1/pets', key, { name: `Max ${round}`, categoryId: 1, status: 'available' })).json()
    const order = (await post(apps[0]!, '/v1/store/orders', key, { petId: pet.id })).json()
    // Half the rounds: the hold has run out, so the sweep and the changes' own expiry race too.
    const due = round % 2 === 1
    if (due) for (const app of apps) (app.clock as ManualClock).advance(31 * 60_000)
    // Started in an order that changes from round to round, so each of them comes first in some.
    const starts = [
      () => post(apps[0]!, `/v1/store/orders/${order.id}/cancel`, key),
      () => post(apps[apps.length - 1]!, `/v1/store/orders/${order.id}/complete`, key),
      () => post(apps[1 % apps.length]!, `/v1/store/orders/${order.id}/cancel`, key),
      async () => Promise.all(apps.map((app) => app.domain.jobs.orderExpiry.run())),
    ]
    const shift = Math.floor(round / 2) % starts.length
    const running = [...starts.slice(shift), ...starts.slice(0, shift)].map((start) => start())
    const settled = await Promise.all(running)
    const answers = settled.filter((r): r is LightMyRequestResponse => !Array.isArray(r))
    const swept = settled.filter((r): r is number[] => Array.isArray(r))[0]!.reduce((a, b) => a + b, 0)
    const changed = answers.filter((r) => r.statusCode === 200)
    const final = (await apps[0]!.app.inject({ url: `/v1/store/orders/${order.id}`, headers: key })).json()
    assert.ok(changed.length <= 1, `round ${round}: ${JSON.stringify(tally(answers))}`)
    if (!due) assert.deepEqual([changed.length, swept], [1, 0], 'a hold still running is not expired')
    else assert.deepEqual([changed.length, final.status], [0, 'expired'], 'a due order cannot be changed, only expired')
    const label = final.status as string
    if (changed.length === 1) assert.equal(changed[0]!.json().status, label)
    for (const res of answers.filter((r) => r.statusCode !== 200)) assert.equal(res.json().code, 'order_not_placed')
    // Exactly once: the order changed once after it was placed, its animal moved once after the placement.
    const [orderRow] = await rawQuery<{ version: number }>(apps[0]!.storage, `SELECT version FROM orders WHERE id = ${order.id}`)
    assert.equal(Number(orderRow!.version), 2, `round ${round}: the order changed once`)
    assert.equal(await petVersion(apps[0]!.storage, pet.id), 3, `round ${round}: the animal moved once after its placement`)
    const petStatus = (await apps[0]!.app.inject({ url: `/v1/pets/${pet.id}`, headers: key })).json().status
    assert.equal(petStatus, label === 'completed' ? 'sold' : 'available')
    const how = due ? (swept > 0 ? 'expired by the sweep' : 'expired by a change') : label
    outcomes[how] = (outcomes[how] ?? 0) + 1
    assert.deepEqual(await invariantProblems(apps[0]!.storage), [])
  }
  return outcomes
}

describe('orders under concurrency', { timeout: 180_000 }, () => {
  test(`SQLite, one instance: ${ORDERS_AT_ONCE} orders at once for one animal, ${ROUNDS} times: one 201, the rest 409`, async () => {
    const cluster = await sqliteCluster()
    try {
      await ordersForOneAnimal(cluster)
      process.stdout.write(`SQLite: ${ROUNDS} rounds, each 1 x 201 and ${ORDERS_AT_ONCE - 1} x 409\n`)
    } finally {
      for (const app of cluster.apps) await app.close()
    }
  })

  test('SQLite: cancel, complete and the sweep racing for one order end it once', async () => {
    const cluster = await sqliteCluster()
    try {
      process.stdout.write(`SQLite races: ${JSON.stringify(await racesForOneOrder(cluster))}\n`)
    } finally {
      for (const app of cluster.apps) await app.close()
    }
  })

  for (const what of ['orders for one animal', 'cancel, complete and the sweep for one order'] as const) {
    test(`PostgreSQL, three instances on one database: ${what}`, async (t) => {
      if (!(await requireService(t, 'PostgreSQL'))) return
      const schema = `orders_${randomBytes(6).toString('hex')}`
      const cluster = await postgresCluster(schema)
      try {
        if (what === 'orders for one animal') {
          await ordersForOneAnimal(cluster)
          process.stdout.write(`PostgreSQL, 3 instances: ${ROUNDS} rounds, each 1 x 201 and ${ORDERS_AT_ONCE - 1} x 409\n`)
        } else {
          process.stdout.write(`PostgreSQL races: ${JSON.stringify(await racesForOneOrder(cluster))}\n`)
        }
      } finally {
        for (const app of cluster.apps) await app.close()
        await dropSchema(schema)
      }
    })
  }
})
