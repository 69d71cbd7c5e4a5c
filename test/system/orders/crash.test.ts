/**
 * kill -9 of a real server during a storm of orders (places, then completes and cancels of the
 * ones placed) loses no acknowledged change and leaves the store consistent: every 201 order is
 * there after a restart, every acknowledged complete or cancel too; read straight from the
 * database after the kill, no animal is pending without a placed order, no placed order holds an
 * animal that is not pending, and the inventory's counts are the animals'. Two kills per engine.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import Database from 'better-sqlite3'
import { requireService } from '../../helpers/services.js'
import { useScratchDatabase, withPg } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, type ServerProcess, startServer, useTempDir } from '../helpers/process.js'

const ANIMALS = 400
const WORKERS = 16
const KILL_AFTER_MS = [600, 1500] as const
const KILLS = 2

/** An acknowledged change: the order, and the status its answer said it reached. */
type Acknowledged = Map<number, { petId: number; status: 'placed' | 'cancelled' | 'completed'; createdAt: string }>

type Rows = (sql: string) => Promise<Array<Record<string, unknown>>>

/** The invariants, read from the database (no server running). Empty when they hold. */
async function storeProblems(rows: Rows): Promise<string[]> {
  const problems: string[] = []
  const orphans = await rows(
    "SELECT id FROM pets WHERE status = 'pending' AND id IN (SELECT pet_id FROM orders) AND id NOT IN (SELECT pet_id FROM orders WHERE status = 'placed')",
  )
  if (orphans.length > 0) problems.push(`${orphans.length} pending animals without a placed order`)
  const unheld = await rows(
    "SELECT o.id FROM orders o JOIN pets p ON p.id = o.pet_id WHERE o.status = 'placed' AND (p.status IS NULL OR p.status <> 'pending')",
  )
  if (unheld.length > 0) problems.push(`${unheld.length} placed orders whose animal is not pending`)
  const counted = await rows('SELECT status, sum(pets) AS n FROM pet_status_counts GROUP BY status ORDER BY status')
  const actual = await rows('SELECT status, count(*) AS n FROM pets WHERE status IS NOT NULL GROUP BY status ORDER BY status')
  const asText = (r: Array<Record<string, unknown>>) => r.map((x) => `${x.status}=${Number(x.n)}`).join(' ')
  const all = (r: Array<Record<string, unknown>>) =>
    ['available', 'pending', 'sold'].map((s) => `${s}=${Number(r.find((x) => x.status === s)?.n ?? 0)}`).join(' ')
  if (all(counted) !== all(actual)) problems.push(`inventory counts ${asText(counted)}, animals ${asText(actual)}`)
  return problems
}

async function send(server: ServerProcess, auth: Record<string, string>, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

async function storm(t: TestContext, dir: string, db: string, rows: Rows): Promise<void> {
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'storm', perMinute: 1_000_000, perDay: 10_000_000 })
  const auth = bearer(key)
  const acknowledged: Acknowledged = new Map()
  let server = await startServer(t, { dir, db })
  const pets: number[] = []
  for (let i = 0; i < ANIMALS; i++)
    pets.push(Number((await send(server, auth, 'POST', '/v1/pets', { name: `stock-${i}`, categoryId: 1, status: 'available' })).body.id))
  let changes = 0
  for (let kill = 1; kill <= KILLS; kill++) {
    let killed = false
    const [min, max] = KILL_AFTER_MS
    const timer = setTimeout(
      () => {
        server.child.kill('SIGKILL')
        killed = true
      },
      min + Math.random() * (max - min),
    )
    const errors: string[] = []
    const worker = async () => {
      while (!killed) {
        try {
          const mine = [...acknowledged].filter(([, o]) => o.status === 'placed')
          if (mine.length > 0 && Math.random() < 0.4) {
            const [id] = mine[Math.floor(Math.random() * mine.length)]!
            const change = Math.random() < 0.5 ? 'cancel' : 'complete'
            const res = await send(server, auth, 'POST', `/v1/store/orders/${id}/${change}`)
            if (res.status === 200) acknowledged.get(id)!.status = res.body.status as 'cancelled' | 'completed'
            else if (res.status !== 409) errors.push(`${change}: ${res.status} ${JSON.stringify(res.body)}`)
          } else {
            const petId = pets[Math.floor(Math.random() * pets.length)]!
            const res = await send(server, auth, 'POST', '/v1/store/orders', { petId })
            if (res.status === 201)
              acknowledged.set(Number(res.body.id), { petId, status: 'placed', createdAt: String(res.body.createdAt) })
            else if (res.status !== 409) errors.push(`place: ${res.status} ${JSON.stringify(res.body)}`)
          }
          changes++
        } catch (error) {
          if (!killed) errors.push(String(error))
          return
        }
      }
    }
    await Promise.all(Array.from({ length: WORKERS }, worker))
    clearTimeout(timer)
    assert.equal((await server.exited).signal, 'SIGKILL')
    assert.deepEqual(errors, [], 'before the kill, every answer was 200, 201 or 409')
    // Straight from the database, before any server touches it again.
    assert.deepEqual(await storeProblems(rows), [], `after kill ${kill}`)
    server = await startServer(t, { dir, db })
    for (const [id, order] of acknowledged) {
      const res = await send(server, auth, 'GET', `/v1/store/orders/${id}`)
      assert.equal(res.status, 200, `acknowledged order ${id} is there`)
      assert.deepEqual([res.body.petId, res.body.createdAt], [order.petId, order.createdAt], `order ${id}`)
      // A change answered 200 is in the store; a placed one may have changed after its answer was lost.
      if (order.status !== 'placed') assert.equal(res.body.status, order.status, `order ${id}: its acknowledged ${order.status}`)
      else order.status = res.body.status as 'placed'
    }
  }
  const statuses = [...acknowledged.values()].map((o) => o.status)
  process.stdout.write(
    `${KILLS} kills during ${changes} answered changes: ${acknowledged.size} acknowledged orders all there ` +
      `(${statuses.filter((s) => s === 'completed').length} completed, ${statuses.filter((s) => s === 'cancelled').length} cancelled); store consistent after each kill\n`,
  )
  assert.ok(acknowledged.size > 0)
  await server.stop()
}

test('SQLite: kill -9 during a storm of orders loses no acknowledged change, leaves no animal pending without an order', {
  timeout: 180_000,
}, async (t) => {
  const dir = await useTempDir(t, 'animal-store-orders-crash-')
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

test('PostgreSQL: kill -9 during a storm of orders loses no acknowledged change, leaves no animal pending without an order', {
  timeout: 180_000,
}, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const dir = await useTempDir(t, 'animal-store-orders-crash-')
  const db = await useScratchDatabase(t, 'as_orders_crash_')
  await storm(t, dir, db, async (sql) => withPg(db, async (c) => (await c.query(sql)).rows))
})
