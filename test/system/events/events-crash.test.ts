/**
 * The event log is an outbox (written in the transaction of its change): after a kill -9 of a real
 * server during a storm of orders, read straight from the database, every acknowledged order has
 * its `order.placed` event, every order its events (one `order.placed`, and one for its end if it
 * ended), and no event tells of an order or an animal that is not there. One kill per engine,
 * about a second of storm.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import Database from 'better-sqlite3'
import { requireService } from '../../helpers/services.js'
import { useScratchDatabase, withPg } from '../helpers/cluster.js'
import { orderStormUntilKilled, stockAnimals, storePost } from '../helpers/order-storm.js'
import { bearer, createKeyViaCli, startServer, useTempDir } from '../helpers/process.js'

const ANIMALS = 150
const WORKERS = 12
const KILL_AFTER_MS = [500, 1200] as const

type Rows = (sql: string) => Promise<Array<Record<string, unknown>>>

/** What the database holds that breaks the outbox's rule; empty when it holds. */
async function outboxProblems(rows: Rows, acknowledged: Set<number>): Promise<string[]> {
  const problems: string[] = []
  const orders = new Map((await rows('SELECT id, status FROM orders')).map((r) => [Number(r.id), String(r.status)]))
  const pets = new Set((await rows('SELECT id FROM pets')).map((r) => Number(r.id)))
  const events = (await rows('SELECT type, data FROM events ORDER BY seq')).map((r) => ({
    type: String(r.type),
    data: JSON.parse(String(r.data)) as { id: number; status?: string },
  }))
  const byOrder = new Map<number, string[]>()
  for (const { type, data } of events) {
    if (type === 'pet.created' && !pets.has(data.id)) problems.push(`pet.created of animal ${data.id}, which is not there`)
    if (!type.startsWith('order.')) continue
    if (!orders.has(data.id)) problems.push(`${type} of order ${data.id}, which is not there`)
    byOrder.set(data.id, [...(byOrder.get(data.id) ?? []), type])
  }
  for (const [id, status] of orders) {
    const expected = status === 'placed' ? ['order.placed'] : ['order.placed', `order.${status}`]
    if (JSON.stringify(byOrder.get(id) ?? []) !== JSON.stringify(expected))
      problems.push(`order ${id} (${status}) has events ${JSON.stringify(byOrder.get(id) ?? [])}`)
  }
  for (const id of acknowledged) if (!orders.has(id)) problems.push(`acknowledged order ${id} is not there`)
  const created = events.filter((e) => e.type === 'pet.created').length
  if (created !== pets.size) problems.push(`${pets.size} animals, ${created} pet.created events`)
  return problems
}

async function storm(t: TestContext, dir: string, db: string, rows: Rows): Promise<void> {
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'storm', perMinute: 1_000_000, perDay: 10_000_000 })
  const auth = bearer(key)
  const server = await startServer(t, { dir, db })
  const post = storePost(server, auth)
  const pets = await stockAnimals(post, ANIMALS)
  const acknowledged = await orderStormUntilKilled(server, post, pets, { workers: WORKERS, killAfterMs: KILL_AFTER_MS })
  assert.equal((await server.exited).signal, 'SIGKILL')
  assert.ok(acknowledged.size > 0, 'some orders were acknowledged before the kill')
  assert.deepEqual(await outboxProblems(rows, acknowledged), [])
  process.stdout.write(`kill -9 after ${acknowledged.size} acknowledged orders: every order has its events, every event its order\n`)
}

test('SQLite: after kill -9 during an order storm, every order has its events and every event its order', {
  timeout: 120_000,
}, async (t) => {
  const dir = await useTempDir(t, 'animal-store-events-crash-')
  const db = join(dir, 'store.db')
  await storm(t, dir, db, async (sql) => {
    const sqlite = new Database(db)
    try {
      return sqlite.prepare(sql).all() as Array<Record<string, unknown>>
    } finally {
      sqlite.close()
    }
  })
})

test('PostgreSQL: after kill -9 during an order storm, every order has its events and every event its order', {
  timeout: 120_000,
}, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const dir = await useTempDir(t, 'animal-store-events-crash-')
  const db = await useScratchDatabase(t, 'as_events_crash_')
  await storm(t, dir, db, async (sql) => withPg(db, async (c) => (await c.query(sql)).rows))
})
