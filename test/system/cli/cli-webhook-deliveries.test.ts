/**
 * The delivery log from the command line (`animal-store webhooks deliveries|delivery|retry|replay`),
 * beside a server on the same SQLite file that delivers to a receiver on loopback answering 500,
 * then 204: the CLI's --json documents are the admin API's answers; the text shows the status, the
 * attempts and their errors; retry and replay make deliveries due, which the server sends (the CLI
 * sends nothing itself); a missing --since is a usage error, an unknown delivery points at the list.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { bearer, createKeyViaCli, request, runCli, startServer, useTempDir, waitFor } from '../helpers/process.js'

type Json = Record<string, any>

test('webhooks deliveries, delivery, retry and replay from the command line', { timeout: 180_000 }, async (t) => {
  const hits: string[] = []
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      hits.push(String(req.headers['webhook-id']))
      res.writeHead(hits.length === 1 ? 500 : 204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    receiver.closeAllConnections()
    receiver.close()
  })
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms' }
  const run = (args: string[]) => runCli(args, { db, env })
  const json = async (...args: string[]): Promise<Json> => {
    const r = await run([...args, '--json'])
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  const endpointId = (await json('webhooks', 'create', '--url', url, '--events', 'pet.created')).endpoint.id as string
  const { token } = await json('admin-tokens', 'create', '--name', 'ops')
  const { key } = await createKeyViaCli(db, { plan: 'pro', name: 'shop' })
  const server = await startServer(t, { dir, db, env })
  const since = new Date().toISOString()
  const pet = await request(`${server.url}/v1/pets`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  })
  assert.equal(pet.status, 201, pet.text)
  assert.ok(await waitFor(() => hits.length === 2, 30_000), `delivered on the second attempt (${hits.length})`)
  const admin = async (path: string) => (await request(`${server.adminUrl}/admin/v1${path}`, { headers: bearer(token) })).body
  assert.ok(await waitFor(async () => (await json('webhooks', 'deliveries', endpointId)).data[0]?.status === 'delivered', 10_000))

  // The log: the admin API's documents, and text for a person.
  const listed = await json('webhooks', 'deliveries', endpointId)
  assert.deepEqual(listed, await admin(`/webhook-endpoints/${endpointId}/deliveries?limit=20`))
  const [delivery] = listed.data as Json[]
  assert.deepEqual([delivery!.eventId, delivery!.status, delivery!.attempts], [hits[0], 'delivered', 2])
  const text = await run(['webhooks', 'deliveries', endpointId])
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /^DELIVERY +EVENT +TYPE +STATUS +ATTEMPTS +LAST$/m)
  assert.match(text.stdout, new RegExp(`^${delivery!.id} +${hits[0]} +pet\\.created +delivered +2 +204$`, 'm'))
  const shown = await json('webhooks', 'delivery', endpointId, delivery!.id)
  assert.deepEqual(shown, await admin(`/webhook-endpoints/${endpointId}/deliveries/${delivery!.id}`))
  assert.deepEqual(
    shown.attemptLog.map((a: Json) => [a.attempt, a.statusCode, a.error]),
    [
      [1, 500, 'the receiver answered 500'],
      [2, 204, null],
    ],
  )
  const detail = await run(['webhooks', 'delivery', endpointId, delivery!.id])
  assert.match(detail.stdout, /^Status: +delivered$/m)
  assert.match(detail.stdout, /^1 +\S+ +\d+ +500 +the receiver answered 500$/m)

  // Retry and replay: due now, sent by the server.
  const retried = await run(['webhooks', 'retry', endpointId, delivery!.id])
  assert.deepEqual([retried.code, retried.stdout], [0, `Delivery ${delivery!.id} is due now; a running server sends it.\n`])
  assert.ok(await waitFor(() => hits.length === 3, 30_000), 'sent again')
  assert.deepEqual(await json('webhooks', 'replay', endpointId, '--since', since), { enqueued: 1 })
  assert.ok(await waitFor(() => hits.length === 4, 30_000), 'replayed')
  assert.deepEqual(new Set(hits), new Set([hits[0]]), 'one event, one webhook-id')

  // Mistakes.
  const noSince = await run(['webhooks', 'replay', endpointId])
  assert.equal(noSince.code, 2)
  assert.match(noSince.stderr, /^animal-store: webhooks replay needs --since$/m)
  const unknown = await run(['webhooks', 'delivery', endpointId, 'dlv_0000000000000000'])
  assert.equal(unknown.code, 2)
  assert.match(
    unknown.stderr,
    /^animal-store: no webhook delivery with id dlv_0000000000000000 \(node dist\/cli\.js webhooks deliveries ENDPOINT_ID shows the ids\)$/m,
  )
})
