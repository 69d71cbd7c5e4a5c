/**
 * Webhook delivery end to end, in this process (the server's jobs running, a receiver on
 * loopback, WEBHOOK_RETRY_SCHEDULE=50ms,50ms), and the delivery log through the admin API
 * (app.inject): a receiver answering 500, 500, then 204 gets the event three times with one
 * `webhook-id`, each verified by the standardwebhooks package, and the log shows the three
 * attempts; the log is paged newest first; retry and replay make deliveries due again (202) and
 * are audited, as are the log's reads; a `read` token reads the log and changes nothing; /readyz
 * stays ready while receivers fail; the deliveries' metrics are on /metrics.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Webhook } from 'standardwebhooks'
import { createAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { systemClock } from '../../../src/shared/clock.js'
import { bearer } from '../../helpers/app.js'
import { createApiKey } from '../../helpers/keys.js'
import { waitFor } from '../../helpers/wait.js'
import { buildAdminSuiteApp } from '../helpers.js'

const BASE = '/admin/v1/webhook-endpoints'

interface Hit {
  path: string
  headers: IncomingMessage['headers']
  body: string
}

describe('webhook deliveries and their log', () => {
  const t = buildAdminSuiteApp({
    clock: systemClock,
    env: { WEBHOOK_DELIVERY: 'on', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms' },
  })
  const allHits: Hit[] = []
  /** What the receiver answers to its nth request at a path (from 1). */
  let answer: (n: number) => number = () => 204
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? ''
      allHits.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString() })
      res.writeHead(answer(allHits.filter((h) => h.path === path).length)).end()
    })
  })
  let base = ''
  let apiKey = ''
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    apiKey = (await createApiKey(t.storage.keys, { plan: 'pro', name: 'shop' }, t.config.env)).key
  })
  after(() => {
    server.closeAllConnections()
    server.close()
  })

  /** An endpoint of its own path on the receiver, and the requests that path received. */
  const createEndpoint = async (path: string, events: string[] = ['pet.created']) => {
    const res = await t.call('POST', BASE, { url: `${base}/${path}`, events })
    assert.equal(res.statusCode, 201, res.body)
    const hits = () => allHits.filter((h) => h.path === `/${path}`)
    return { ...(res.json() as { secret: string; endpoint: { id: string } }), hits }
  }
  const createPet = async (name: string) => {
    const res = await t.api.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      payload: { name, categoryId: 1 },
    })
    assert.equal(res.statusCode, 201, res.body)
    return res.json() as { id: number }
  }

  test('a receiver answering 500, 500, then 204 gets the event three times with one webhook-id, each verified; the log shows three attempts', async () => {
    answer = (n) => (n <= 2 ? 500 : 204)
    const { secret, endpoint, hits } = await createEndpoint('three')
    const pet = await createPet('Rex')
    assert.ok(await waitFor(() => hits().length >= 3, 15_000), `three attempts (got ${hits().length})`)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(hits().length, 3, 'and no fourth')
    const ids = new Set(hits().map((h) => h.headers['webhook-id']))
    assert.equal(ids.size, 1, 'one webhook-id on every attempt')
    for (const hit of hits()) {
      const verified = new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>) as { type: string; data: unknown }
      assert.equal(verified.type, 'pet.created')
      assert.deepEqual(verified.data, { id: pet.id, name: 'Rex', categoryId: 1 })
    }

    const listed = await t.call('GET', `${BASE}/${endpoint.id}/deliveries`)
    assert.equal(listed.statusCode, 200, listed.body)
    const [delivery] = (listed.json() as { data: Array<Record<string, unknown>> }).data
    assert.ok(
      await waitFor(async () => (await t.call('GET', `${BASE}/${endpoint.id}/deliveries`)).json().data[0].status === 'delivered', 5_000),
    )
    const got = await t.call('GET', `${BASE}/${endpoint.id}/deliveries/${delivery!.id}`)
    assert.equal(got.statusCode, 200, got.body)
    const detail = got.json()
    assert.equal(detail.eventId, [...ids][0])
    assert.equal(detail.eventType, 'pet.created')
    assert.equal(detail.status, 'delivered')
    assert.equal(detail.attempts, 3)
    assert.equal(detail.lastStatusCode, 204)
    assert.equal(detail.lastError, null)
    assert.equal(detail.nextAttemptAt, null)
    assert.deepEqual(
      detail.attemptLog.map((a: { attempt: number; statusCode: number; error: string | null }) => [a.attempt, a.statusCode, a.error]),
      [
        [1, 500, 'the receiver answered 500'],
        [2, 500, 'the receiver answered 500'],
        [3, 204, null],
      ],
    )
    for (const a of detail.attemptLog) {
      assert.equal(typeof a.durationMs, 'number')
      assert.match(a.startedAt, /^\d{4}-\d\d-\d\dT/)
    }
  })

  test('the log is paged newest first; retry and replay make deliveries due again, 202, on the audit log', async () => {
    answer = () => 204
    const { endpoint, hits } = await createEndpoint('paged')
    const since = new Date().toISOString()
    for (const name of ['A', 'B', 'C']) await createPet(name)
    const page = async (query: string) => {
      const res = await t.call('GET', `${BASE}/${endpoint.id}/deliveries${query}`)
      assert.equal(res.statusCode, 200, res.body)
      return res
    }
    assert.ok(
      await waitFor(
        async () => (await page('')).json().data.filter((d: { status: string }) => d.status === 'delivered').length === 3,
        10_000,
      ),
    )
    const first = await page('?limit=2')
    const body = first.json() as { data: Array<{ id: string; eventId: string }>; nextAfter: number }
    assert.equal(body.data.length, 2)
    assert.equal(first.headers.link, `<${BASE}/${endpoint.id}/deliveries?limit=2&after=${body.nextAfter}>; rel="next"`)
    const second = (await page(`?limit=2&after=${body.nextAfter}`)).json() as { data: Array<{ id: string }>; nextAfter: number | null }
    assert.equal(second.data.length, 1)
    assert.equal(second.nextAfter, null)

    const sent = hits().length
    const retried = await t.call('POST', `${BASE}/${endpoint.id}/deliveries/${second.data[0]!.id}/retry`)
    assert.equal(retried.statusCode, 202, retried.body)
    assert.equal(retried.json().status, 'pending')
    assert.ok(await waitFor(() => hits().length === sent + 1, 10_000), 'sent once more')
    assert.equal(hits()[sent]!.headers['webhook-id'], (await page('')).json().data[2].eventId, 'the oldest event, retried')

    const replayed = await t.call('POST', `${BASE}/${endpoint.id}/replay`, { since })
    assert.equal(replayed.statusCode, 202, replayed.body)
    assert.deepEqual(replayed.json(), { enqueued: 3 })
    assert.ok(await waitFor(() => hits().length === sent + 4, 10_000), 'each sent again')

    const audit = await t.call('GET', '/admin/v1/audit-log?limit=100&order=desc')
    const actions = (audit.json().data as Array<{ action: string; details: Record<string, unknown> }>).map((e) => e.action)
    for (const action of ['webhook_delivery.list', 'webhook_delivery.retry', 'webhook_endpoint.replay'])
      assert.ok(actions.includes(action), `${action} on the audit log`)
    const replayEntry = (audit.json().data as Array<{ action: string; details: Record<string, unknown> }>).find(
      (e) => e.action === 'webhook_endpoint.replay',
    )
    assert.deepEqual(replayEntry?.details, { endpointId: endpoint.id, since })
  })

  test('unknown ids are 404; a disabled endpoint is 409 for retry and replay; bad input 400', async () => {
    const { endpoint } = await createEndpoint('refused')
    assert.equal((await t.call('GET', `${BASE}/we_0000000000000000/deliveries`)).statusCode, 404)
    assert.equal((await t.call('GET', `${BASE}/${endpoint.id}/deliveries/dlv_0000000000000000`)).statusCode, 404)
    assert.equal((await t.call('POST', `${BASE}/${endpoint.id}/deliveries/dlv_0000000000000000/retry`)).statusCode, 404)
    assert.equal((await t.call('GET', `${BASE}/${endpoint.id}/deliveries/nope`)).statusCode, 400)
    assert.equal((await t.call('POST', `${BASE}/${endpoint.id}/replay`, { since: 'yesterday' })).statusCode, 400)
    assert.equal((await t.call('POST', `${BASE}/${endpoint.id}/replay`, { since: '2999-01-01T00:00:00Z' })).statusCode, 400)
    assert.equal((await t.call('POST', `${BASE}/${endpoint.id}/replay`, {})).statusCode, 400)
    assert.equal((await t.call('PATCH', `${BASE}/${endpoint.id}`, { enabled: false })).statusCode, 200)
    const refused = await t.call('POST', `${BASE}/${endpoint.id}/replay`, { since: new Date().toISOString() })
    assert.equal(refused.statusCode, 409, refused.body)
    assert.match(refused.json().message, /disabled \(manual\): enable it first/)
  })

  test('a read token reads the log and is refused retry and replay', async () => {
    const { endpoint } = await createEndpoint('read')
    const { token } = await createAdminToken(t.storage.adminTokens, { name: 'reader', role: 'read' })
    const as = (method: 'GET' | 'POST', path: string, body?: unknown) =>
      t.app.inject({
        method,
        url: path,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      })
    assert.equal((await as('GET', `${BASE}/${endpoint.id}/deliveries`)).statusCode, 200)
    assert.equal((await as('POST', `${BASE}/${endpoint.id}/replay`, { since: new Date().toISOString() })).statusCode, 403)
    assert.equal((await as('POST', `${BASE}/${endpoint.id}/deliveries/dlv_0000000000000000/retry`)).statusCode, 403)
  })

  test('a 410 disables the endpoint (gone); its webhook_endpoint.disabled event is the public document’s payload', async () => {
    answer = () => 410
    const { endpoint, hits } = await createEndpoint('gone')
    await createPet('Gone')
    assert.ok(await waitFor(async () => (await t.call('GET', `${BASE}/${endpoint.id}`)).json().enabled === false, 10_000))
    const shown = (await t.call('GET', `${BASE}/${endpoint.id}`)).json()
    assert.equal(shown.disabledReason, 'gone')
    assert.equal(hits().length, 1, 'given up at once')
    const events = (await t.call('GET', '/admin/v1/events?type=webhook_endpoint.disabled')).json().data as Array<Record<string, unknown>>
    const event = events.find((e) => (e.data as { id: string }).id === endpoint.id)!
    assert.deepEqual(event.data, shown, 'the endpoint as the admin API shows it')
    const doc = (await t.api.inject({ url: '/v1/openapi.json' })).json()
    const ajv = new Ajv2020({ strict: false })
    ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T/)
    ajv.addKeyword('example')
    const validate = ajv.compile(doc.webhooks['webhook_endpoint.disabled'].post.requestBody.content['application/json'].schema)
    const { type, timestamp, data } = event
    assert.ok(validate({ type, timestamp, data }), JSON.stringify(validate.errors))
  })

  test('/readyz stays ready while receivers fail; the deliveries are counted on /metrics', async () => {
    answer = () => 503
    const { hits } = await createEndpoint('failing')
    await createPet('Failing')
    assert.ok(await waitFor(() => hits().length > 0, 10_000))
    const ready = await t.api.inject({ url: '/readyz' })
    assert.equal(ready.statusCode, 200, ready.body)
    const metrics = (await t.app.inject({ url: '/metrics' })).body
    assert.match(metrics, /animal_store_webhook_deliveries_total\{outcome="delivered"\} [1-9]/)
    assert.match(metrics, /animal_store_webhook_deliveries_total\{outcome="failed_attempt"\} [1-9]/)
    assert.match(metrics, /animal_store_webhook_deliveries_pending [0-9]+/)
    assert.match(metrics, /animal_store_webhook_oldest_pending_seconds [0-9.e+-]+/)
    assert.match(metrics, /animal_store_webhook_events_undispatched [0-9]+/)
  })
})
