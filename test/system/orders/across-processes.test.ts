/**
 * Orders across real processes: 40 orders at once for one animal, repeated over fresh animals,
 * are exactly one 201 and 39 409s
 *   - over three server instances on one PostgreSQL database and one Redis (spread round-robin),
 *   - over `serve --workers 2` on one SQLite file (limits in Redis; new connections: the workers take turns);
 * and every process shows a change at once, its caches warm: after each round every instance (or
 * a worker on each of several new connections) reads the animal as pending and the inventory as
 * moved. The in-process versions are test/orders/concurrency.test.ts and cache-freshness.test.ts.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { nodeChildPids, spawnCli, useScratchDatabase, waitFor } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, request, startServer, useTempDir } from '../helpers/process.js'

const ORDERS_AT_ONCE = 40
const ROUNDS = 15
const ENTERPRISE = { plan: 'enterprise', name: 'orders', perMinute: 1_000_000, perDay: 10_000_000 } as const

/** A GET on a connection of its own (closed after it): with `serve --workers`, the workers take turns to accept them. */
function getOnNewConnection(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { ...headers, connection: 'close' }, timeout: 10_000 }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (s: string) => (text += s))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)))
    req.on('error', reject)
  })
}

/** Rounds of ORDERS_AT_ONCE orders for a fresh animal over `bases` in turn; each round's tally, and the reads checked after it. */
async function rounds(bases: string[], key: string, readers: string[]): Promise<string[]> {
  const auth = bearer(key)
  const seen: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const pet = await request(`${bases[0]}/v1/pets`, {
      method: 'POST',
      headers: auth,
      body: { name: `Rex ${round}`, categoryId: 1, status: 'available' },
    })
    assert.equal(pet.status, 201, pet.text)
    const id = (pet.body as { id: number }).id
    // Every reader has the animal (and a page of it) cached before the orders.
    for (let i = 0; i < 2; i++) for (const base of readers) await getOnNewConnection(`${base}/v1/pets/${id}`, auth)
    const answers = await Promise.all(
      Array.from({ length: ORDERS_AT_ONCE }, (_, i) =>
        request(`${bases[i % bases.length]}/v1/store/orders`, { method: 'POST', headers: auth, body: { petId: id }, timeoutMs: 20_000 }),
      ),
    )
    const tally: Record<string, number> = {}
    for (const res of answers) {
      const label = res.status === 201 ? '201' : `${res.status} ${(res.body as { code?: string }).code}`
      tally[label] = (tally[label] ?? 0) + 1
    }
    assert.deepEqual(tally, { '201': 1, '409 pet_not_available': ORDERS_AT_ONCE - 1 }, `round ${round}`)
    seen.push(JSON.stringify(tally))
    for (const base of readers) {
      const read = await getOnNewConnection(`${base}/v1/pets/${id}`, auth)
      assert.equal((read.body as { status: string }).status, 'pending', `round ${round}: ${base} reads the change at once`)
    }
  }
  const inventory = await request(`${readers.at(-1)}/v1/store/inventory`, { headers: auth })
  assert.deepEqual(inventory.body, { available: 0, pending: ROUNDS, sold: 0 })
  return seen
}

test('three instances on PostgreSQL + Redis: one order per animal, every instance reads the change at once', {
  timeout: 300_000,
}, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t, 'animal-store-orders-')
  const db = await useScratchDatabase(t, 'as_orders_')
  const servers = await Promise.all(
    ['a', 'b', 'c'].map((name) => startServer(t, { dir, db, logFile: join(dir, `server-${name}.log`), env: { REDIS_URL } })),
  )
  const { key } = await createKeyViaCli(db, ENTERPRISE)
  const bases = servers.map((s) => s.url)
  const started = performance.now()
  await rounds(bases, key, bases)
  process.stdout.write(
    `PostgreSQL + Redis, 3 instances: ${ROUNDS} rounds of ${ORDERS_AT_ONCE} orders at once, each 1 x 201 and ${ORDERS_AT_ONCE - 1} x 409 ` +
      `(${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  )
})

/** The pids of the workers that logged that they listen. */
function listeningPids(log: string): Set<number> {
  let text = ''
  try {
    text = readFileSync(log, 'utf8')
  } catch {
    return new Set()
  }
  const pids = new Set<number>()
  for (const line of text.split('\n')) {
    try {
      const entry = JSON.parse(line) as { msg?: string; pid?: number }
      if (entry.msg?.startsWith('Server listening') && entry.pid !== undefined) pids.add(entry.pid)
    } catch {
      // a line being written right now
    }
  }
  return pids
}

async function sqliteWorkers(t: TestContext): Promise<{ url: string; db: string }> {
  const dir = await useTempDir(t, 'animal-store-orders-')
  const db = join(dir, 'store.db')
  const log = join(dir, 'server.log')
  // Workers share their limits in Redis (a worker's own in-memory limiter would allow the whole quota).
  const primary = await spawnCli(t, ['serve', '--workers', '2'], { DATABASE_URL: db, REDIS_URL, LOG_FILE: log, LOG_LEVEL: 'info' })
  const ready = await waitFor(() => listeningPids(log).size === 2 || primary.child.exitCode !== null, 60_000, 100)
  assert.ok(ready && primary.child.exitCode === null, `2 workers listening\n${primary.stderr()}`)
  assert.equal(nodeChildPids(primary.pid).length, 2)
  return { url: primary.url, db }
}

test('serve --workers 2 on one SQLite file: one order per animal, each worker reads the change at once', {
  timeout: 300_000,
}, async (t) => {
  const { url, db } = await sqliteWorkers(t)
  const { key } = await createKeyViaCli(db, ENTERPRISE)
  // Reads on new connections (the workers take turns to accept them): both workers' caches.
  const started = performance.now()
  await rounds([url], key, [url, url, url, url])
  process.stdout.write(
    `SQLite, 2 worker processes: ${ROUNDS} rounds of ${ORDERS_AT_ONCE} orders at once, each 1 x 201 and ${ORDERS_AT_ONCE - 1} x 409 ` +
      `(${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  )
})
