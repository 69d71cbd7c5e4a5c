/**
 * Webhook delivery across a kill -9 (a real server, on SQLite and on PostgreSQL): a storm of orders while a receiver on
 * loopback takes 100 ms to answer each delivery (so attempts are in flight at the kill), then a
 * kill -9, then a new start on the same file: every event written after the endpoint was made
 * (every acknowledged order's `order.placed` among them) reaches the receiver, counted by
 * `webhook-id`, each one verified by the standardwebhooks package. An event the receiver answered
 * 2xx is sent again only if that attempt was in flight at the kill (the delivery log shows an
 * attempt without outcome: the lease lost with the killed server), so at most WEBHOOK_CONCURRENCY
 * of them; no other is received twice.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import Database from 'better-sqlite3'
import { Webhook } from 'standardwebhooks'
import { requireService } from '../../helpers/services.js'
import { useScratchDatabase, withPg } from '../helpers/cluster.js'
import { orderStormUntilKilled, stockAnimals, storePost } from '../helpers/order-storm.js'
import { bearer, createKeyViaCli, runCli, startServer, useTempDir, waitFor } from '../helpers/process.js'

const ANIMALS = 120
const WORKERS = 10
const CONCURRENCY = 4
const KILL_AFTER_MS = [800, 1500] as const
/**
 * A lease lost with the killed server lapses after WEBHOOK_TIMEOUT_MS + 10 s. Long enough that no
 * attempt the receiver answers (in 100 ms) times out on a busy machine: that would be a failed
 * attempt whose event the receiver has, sent again, a repeat the kill did not cause.
 */
const TIMEOUT_MS = 5_000

type Rows = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>

async function stormAndKill(t: TestContext, dir: string, db: string, rows: Rows): Promise<void> {
  const env = {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s,2s,5s',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
  }

  // The receiver: 204 after 100 ms; every request's webhook-id, verified, with when it was answered.
  let secret = ''
  const received = new Map<string, number>()
  let unverified = 0
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        new Webhook(secret).verify(Buffer.concat(chunks).toString(), req.headers as Record<string, string>)
      } catch {
        unverified++
      }
      setTimeout(() => {
        const id = String(req.headers['webhook-id'])
        res.writeHead(204).end()
        received.set(id, (received.get(id) ?? 0) + 1)
      }, 100)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    receiver.closeAllConnections()
    receiver.close()
  })
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'storm', perMinute: 1_000_000, perDay: 10_000_000 })
  const created = await runCli(['webhooks', 'create', '--url', url, '--events', '*', '--json'], { db, env })
  assert.equal(created.code, 0, created.stderr)
  secret = (JSON.parse(created.stdout) as { secret: string }).secret
  const [{ seq: firstSeq }] = (await rows('SELECT COALESCE(MAX(seq), 0) AS seq FROM events')) as [{ seq: number | string }]

  const server = await startServer(t, { dir, db, env })
  const auth = bearer(key)
  const post = storePost(server, auth)
  const pets = await stockAnimals(post, ANIMALS)
  // Counted from the first delivery received, so that deliveries are in flight whatever the machine's speed.
  await waitFor(() => received.size > 0, 30_000)
  const acknowledged = await orderStormUntilKilled(server, post, pets, { workers: WORKERS, killAfterMs: KILL_AFTER_MS })
  assert.equal((await server.exited).signal, 'SIGKILL')
  assert.ok(acknowledged.size > 0, 'orders were acknowledged before the kill')
  const atKill = received.size

  // What must be delivered: every event written after the endpoint, read from the file.
  const expected = (await rows('SELECT id, type, data FROM events WHERE seq > $1 ORDER BY seq', [firstSeq])) as Array<{
    id: string
    type: string
    data: string
  }>
  const placed = new Set(expected.filter((e) => e.type === 'order.placed').map((e) => (JSON.parse(e.data) as { id: number }).id))
  for (const id of acknowledged) assert.ok(placed.has(id), `acknowledged order ${id} has its order.placed event`)
  assert.ok(atKill < expected.length, `deliveries were still to make at the kill (${atKill} of ${expected.length} received)`)

  const restarted = await startServer(t, { dir, db, env })
  const started = performance.now()
  const all = await waitFor(() => expected.every((e) => received.has(e.id)), 90_000, 200)
  const missing = expected.filter((e) => !received.has(e.id)).map((e) => `${e.type} ${e.id}`)
  assert.ok(all, `every event delivered after the restart; missing ${missing.length}: ${missing.slice(0, 5).join(', ')}`)
  const tookMs = Math.round(performance.now() - started)
  // The attempts in flight at the kill are made again once their leases lapse (WEBHOOK_TIMEOUT_MS + 10 s): wait for them.
  const pending = async () => Number((await rows("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'"))[0]!.n)
  assert.ok(
    await waitFor(async () => (await pending()) === 0, 60_000, 250),
    `every delivery recorded as delivered (${await pending()} not)`,
  )
  const settledMs = Math.round(performance.now() - started)
  await restarted.stop('SIGTERM')

  assert.equal(unverified, 0, 'every request verified by the standardwebhooks package')
  const twice = [...received.entries()].filter(([, n]) => n > 1)
  const attemptsOf = async (id: string) =>
    (await rows(
      `SELECT a.attempt, a.duration_ms, a.status_code, a.error FROM webhook_delivery_attempts a
         JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1 ORDER BY a.attempt`,
      [id],
    )) as Array<{ attempt: number; duration_ms: number | null; status_code: number | null; error: string | null }>
  // A repeat is an attempt the killed server made and never recorded (its lease lapsed): its log says so.
  for (const [id] of twice) {
    const attempts = await attemptsOf(id)
    assert.ok(
      attempts.some((a) => a.duration_ms === null && /^no outcome recorded/.test(a.error ?? '')),
      `${id} was received again, but no attempt of it was lost with the killed server: ${JSON.stringify(attempts)}`,
    )
  }
  assert.ok(
    twice.length <= CONCURRENCY,
    `at most the ${CONCURRENCY} attempts in flight at the kill are repeated (${twice.length}: ${twice.map(([id]) => id).join(', ')})`,
  )
  const statuses = await rows('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status')
  assert.deepEqual(
    statuses.map((r) => [r.status, Number(r.n)]),
    [['delivered', expected.length]],
  )
  process.stdout.write(
    `kill -9 with ${acknowledged.size} orders acknowledged, ${atKill} of ${expected.length} events received at the kill: ` +
      `all ${expected.length} received ${tookMs} ms after the restart and recorded delivered after ${settledMs} ms, ${twice.length} received twice (in flight at the kill)\n`,
  )
}

test('SQLite: after kill -9 during deliveries, every event is delivered by the next start, none twice but those in flight at the kill', {
  timeout: 180_000,
}, async (t) => {
  const dir = await useTempDir(t, 'animal-store-webhook-crash-')
  const db = join(dir, 'store.db')
  await stormAndKill(t, dir, db, async (sql, params = []) => {
    const sqlite = new Database(db, { readonly: true })
    try {
      // PostgreSQL's $n as SQLite's ? (each statement here takes its parameters once, in order).
      return sqlite.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as Array<Record<string, unknown>>
    } finally {
      sqlite.close()
    }
  })
})

test('PostgreSQL: after kill -9 during deliveries, every event is delivered by the next start, none twice but those in flight at the kill', {
  timeout: 180_000,
}, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const dir = await useTempDir(t, 'animal-store-webhook-crash-')
  const db = await useScratchDatabase(t, 'as_webhook_crash_')
  await stormAndKill(t, dir, db, async (sql, params = []) => withPg(db, async (c) => (await c.query(sql, params)).rows))
})
