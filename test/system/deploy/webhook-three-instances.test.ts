/**
 * Webhook delivery with three server processes on one PostgreSQL database and one Redis: 200
 * orders placed through the three, a receiver that always answers 204: every event written after
 * the endpoint was made reaches the receiver exactly once (counted by `webhook-id`), each attempt
 * made by one instance (the outbox and the claims taken FOR UPDATE SKIP LOCKED): the instances'
 * own counts of their attempts add up to one per event.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { useScratchDatabase, withPg } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, request, runCli, type ServerProcess, startServer, useTempDir, waitFor } from '../helpers/process.js'

const ORDERS = 200

test('three instances on PostgreSQL: 200 orders, each event received exactly once', { timeout: 180_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const received = new Map<string, number>()
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = String(req.headers['webhook-id'])
      received.set(id, (received.get(id) ?? 0) + 1)
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    receiver.closeAllConnections()
    receiver.close()
  })
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

  const dir = await useTempDir(t, 'animal-store-webhook-scale-')
  const db = await useScratchDatabase(t, 'as_webhooks_')
  const env = { REDIS_URL, BOOTSTRAP_KEY: 'false', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }
  const instances = (await Promise.all(
    ['a', 'b', 'c'].map((name) => startServer(t, { dir, db, logFile: join(dir, `server-${name}.log`), env })),
  )) as ServerProcess[]
  const created = await runCli(['webhooks', 'create', '--url', url, '--events', '*', '--json'], { db, env })
  assert.equal(created.code, 0, created.stderr)
  const after = (await withPg(db, (c) => c.query('SELECT COALESCE(MAX(seq), 0) AS seq FROM events'))).rows[0].seq as string
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'orders', perMinute: 1_000_000, perDay: 10_000_000 })
  const post = async (n: number, path: string, body: unknown) => {
    const res = await request(`${instances[n % 3]!.url}${path}`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body,
    })
    assert.equal(res.status, 201, res.text)
    return res.body as { id: number }
  }
  // 200 animals, then an order of each, spread over the three instances, 20 at a time.
  const pets: number[] = []
  for (let i = 0; i < ORDERS; i += 20)
    pets.push(
      ...(
        await Promise.all(
          Array.from({ length: 20 }, (_, j) => post(i + j, '/v1/pets', { name: `pet ${i + j}`, categoryId: 1, status: 'available' })),
        )
      ).map((p) => p.id),
    )
  for (let i = 0; i < ORDERS; i += 20)
    await Promise.all(Array.from({ length: 20 }, (_, j) => post(i + j + 1, '/v1/store/orders', { petId: pets[i + j]! })))

  const expected = (await withPg(db, (c) => c.query('SELECT id FROM events WHERE seq > $1 ORDER BY seq', [after]))).rows.map(
    (r: { id: string }) => r.id,
  )
  assert.ok(expected.length >= 2 * ORDERS + 1, `${expected.length} events to deliver`)
  const started = performance.now()
  const all = await waitFor(() => expected.every((id) => received.has(id)), 60_000, 100)
  assert.ok(all, `every event received (${expected.filter((id) => received.has(id)).length} of ${expected.length})`)
  const tookMs = Math.round(performance.now() - started)
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  const repeated = [...received.entries()].filter(([, n]) => n > 1)
  assert.deepEqual(repeated, [], 'none received twice')
  assert.equal(received.size, expected.length, 'nothing else received')

  // Each instance's own count of the attempts it made: together, one per event (how they share them is printed).
  const delivered = await Promise.all(
    instances.map(async (s) => {
      const metrics = (await request(`${s.adminUrl}/metrics`)).text
      return Number(/animal_store_webhook_deliveries_total\{outcome="delivered"\} (\d+)/.exec(metrics)?.[1] ?? 0)
    }),
  )
  assert.equal(
    delivered.reduce((a, b) => a + b, 0),
    expected.length,
    `attempts by instance: ${delivered.join(', ')}`,
  )
  const statuses = await withPg(db, (c) => c.query('SELECT status, COUNT(*)::int AS n FROM webhook_deliveries GROUP BY status'))
  assert.deepEqual(statuses.rows, [{ status: 'delivered', n: expected.length }])
  process.stdout.write(
    `three instances: ${expected.length} events, each received once, ${tookMs} ms after the last order; attempts by instance ${delivered.join(', ')}\n`,
  )
})
