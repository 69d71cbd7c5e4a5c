/**
 * Webhook endpoints through the admin API (app.inject): create (201, Location, the secret shown
 * this once), list (paging, filters), get, update, delete (204, then 404), rotate the secret (the
 * new one shown once, the old one signing until its time); a URL of a non-public destination is
 * 400 naming `url` in every spelling; a `read` token lists and reads, never sees a secret and
 * changes nothing; every change and read is on the audit log, and no secret is in the log, the
 * audit log or an error.
 */
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, test } from 'node:test'
import { pino } from 'pino'
import { createAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { buildAdminSuiteApp, buildAdminTestApp } from '../helpers.js'

const BASE = '/admin/v1/webhook-endpoints'
const URL_ = 'https://hooks.example.com/animal-store'
/** Host names as the test's resolver answers them: never the machine's DNS. */
const NAMES: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'loopback.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
}
const resolveHost = async (host: string) => NAMES[host] ?? Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }))

interface Created {
  secret: string
  endpoint: { id: string; url: string; events: string[]; enabled: boolean; previousSecretExpiresAt: string | null }
}

describe('webhook endpoints through the admin API', () => {
  const lines: string[] = []
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    }),
  )
  const t = buildAdminSuiteApp({ resolveHost, logger })
  const secretsSeen: string[] = []

  const create = async (body: Record<string, unknown>): Promise<Created> => {
    const res = await t.call('POST', BASE, body)
    assert.equal(res.statusCode, 201, res.body)
    const created = res.json() as Created
    secretsSeen.push(created.secret)
    assert.equal(res.headers.location, `${BASE}/${created.endpoint.id}`)
    return created
  }

  test('create answers the endpoint and its secret, once; reads never show it', async () => {
    const created = await create({ url: URL_, events: ['order.placed', 'order.cancelled'], description: 'Warehouse' })
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.match(created.endpoint.id, /^we_[0-9A-Za-z]{16}$/)
    assert.deepEqual(created.endpoint, {
      id: created.endpoint.id,
      url: URL_,
      description: 'Warehouse',
      events: ['order.placed', 'order.cancelled'],
      customerId: null,
      enabled: true,
      disabledReason: null,
      failingSince: null,
      previousSecretExpiresAt: null,
      createdAt: '2026-11-21T12:00:30.000Z',
      updatedAt: '2026-11-21T12:00:30.000Z',
    })
    const got = await t.call('GET', `${BASE}/${created.endpoint.id}`)
    assert.equal(got.statusCode, 200)
    assert.deepEqual(got.json(), created.endpoint)
    const listed = await t.call('GET', BASE)
    assert.equal(listed.statusCode, 200)
    for (const res of [got, listed]) assert.ok(!res.body.includes(created.secret.slice(6)), 'no secret in a read')
    assert.ok(!res404Body(await t.call('GET', `${BASE}/we_0000000000000000`)).includes('whsec_'))
  })

  test('a URL that is not https or points at a non-public address is 400 naming url and why, in every spelling', async () => {
    const cases: Array<[string, RegExp]> = [
      ['http://hooks.example.com/in', /^url must use https/],
      ['https://127.0.0.1/in', /^url must not point at a loopback address: 127\.0\.0\.1/],
      ['https://2130706433/in', /^url must not point at a loopback address: 127\.0\.0\.1/],
      ['https://0x7f000001/in', /^url must not point at a loopback address: 127\.0\.0\.1/],
      ['https://0177.0.0.1/in', /^url must not point at a loopback address: 127\.0\.0\.1/],
      ['https://[::1]/in', /^url must not point at a loopback address: ::1/],
      ['https://[::ffff:127.0.0.1]/in', /^url must not point at a loopback address mapped into IPv6/],
      ['https://169.254.169.254/latest/meta-data/', /^url must not point at a link-local address/],
      ['https://[fd00::1]/in', /^url must not point at a unique-local address/],
      ['https://10.0.0.1/in', /^url must not point at a private address/],
      ['https://loopback.example.com/in', /^url must not point at a loopback address: loopback\.example\.com resolves to 127\.0\.0\.1/],
      ['https://metadata.example.com/in', /^url must not point at a link-local address .*resolves to 169\.254\.169\.254/],
      ['https://nowhere.example.com/in', /^url must name a host that resolves \(nowhere\.example\.com: ENOTFOUND\)/],
      ['https://user:pw@hooks.example.com/in', /^url must not carry a user name or password/],
      ['hooks.example.com', /^url must be an absolute URL/],
    ]
    for (const [url, message] of cases) {
      const res = await t.call('POST', BASE, { url, events: ['*'] })
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`)
      assert.equal(res.json().code, 'invalid_request')
      assert.match(res.json().message, message, url)
      const patched = await t.call('PATCH', `${BASE}/${(await create({ url: URL_, events: ['*'] })).endpoint.id}`, { url })
      assert.equal(patched.statusCode, 400, `PATCH ${url}: ${patched.body}`)
    }
  })

  test('bad input: events, customerId, description, unknown fields; 404 for an unknown id', async () => {
    const refused = async (body: unknown, message: RegExp) => {
      const res = await t.call('POST', BASE, body)
      assert.equal(res.statusCode, 400, res.body)
      assert.match(res.json().message, message)
    }
    await refused({ url: URL_, events: ['order.shipped'] }, /events/)
    await refused({ url: URL_, events: [] }, /events/)
    await refused({ url: URL_, events: ['*', 'order.placed'] }, /events: "\*" stands alone/)
    await refused(
      { url: URL_, events: ['*'], customerId: 'cus_0000000000000000' },
      /^customerId: no customer with id cus_0000000000000000$/,
    )
    await refused({ url: URL_, events: ['*'], secret: 'whsec_mine' }, /secret/)
    await refused({ url: URL_ }, /events/)
    await refused({ url: URL_, events: ['*'], description: 'rtl\u202e' }, /description/)
    for (const [method, path] of [
      ['GET', `${BASE}/we_0000000000000000`],
      ['PATCH', `${BASE}/we_0000000000000000`],
      ['DELETE', `${BASE}/we_0000000000000000`],
      ['POST', `${BASE}/we_0000000000000000/rotate-secret`],
    ] as const) {
      const res = await t.call(method, path, method === 'PATCH' ? { enabled: true } : method === 'POST' ? {} : undefined)
      assert.equal(res.statusCode, 404, `${method} ${path}`)
      assert.equal(res.json().message, 'No webhook endpoint with id we_0000000000000000')
    }
    assert.equal((await t.call('GET', `${BASE}/key_0000000000000000`)).statusCode, 400)
    const id = (await create({ url: URL_, events: ['*'] })).endpoint.id
    assert.match((await t.call('PATCH', `${BASE}/${id}`, {})).json().message, /at least one field/)
    assert.match((await t.call('DELETE', `${BASE}/${id}`, { really: true })).json().message, /delete takes no body/)
  })

  test('update, disable, enable; list filters and pages with Link', async () => {
    await t.call('POST', '/admin/v1/customers', { name: 'Acme', plan: 'pro' }).then(async (res) => {
      assert.equal(res.statusCode, 201)
      const customerId = res.json().id as string
      const own = await create({ url: URL_, events: ['order.placed'], customerId })
      const updated = await t.call('PATCH', `${BASE}/${own.endpoint.id}`, { events: ['*'], enabled: false, description: 'paused' })
      assert.equal(updated.statusCode, 200, updated.body)
      assert.deepEqual(
        (({ events, enabled, disabledReason, description }) => ({ events, enabled, disabledReason, description }))(updated.json()),
        { events: ['*'], enabled: false, disabledReason: 'manual', description: 'paused' },
      )
      const mine = await t.call('GET', `${BASE}?customerId=${customerId}`)
      assert.deepEqual(
        mine.json().data.map((e: { id: string }) => e.id),
        [own.endpoint.id],
      )
      const disabled = await t.call('GET', `${BASE}?state=disabled`)
      assert.deepEqual(
        disabled.json().data.map((e: { id: string }) => e.id),
        [own.endpoint.id],
      )
      const enabled = await t.call('PATCH', `${BASE}/${own.endpoint.id}`, { enabled: true })
      assert.deepEqual([enabled.json().enabled, enabled.json().disabledReason], [true, null])
    })
    const first = await t.call('GET', `${BASE}?limit=2`)
    assert.equal(first.json().data.length, 2)
    const next = first.json().nextAfter as string
    assert.equal(first.headers.link, `<${BASE}?limit=2&after=${next}>; rel="next"`)
    const second = await t.call('GET', `${BASE}?limit=2&after=${next}`)
    assert.ok(second.json().data.every((e: { id: string }) => e.id > next))
  })

  test('rotate: the new secret once, the previous one signing until its time; delete: 204, then 404', async () => {
    const created = await create({ url: URL_, events: ['*'] })
    const rotated = await t.call('POST', `${BASE}/${created.endpoint.id}/rotate-secret`, {})
    assert.equal(rotated.statusCode, 200, rotated.body)
    const body = rotated.json() as Created
    secretsSeen.push(body.secret)
    assert.match(body.secret, /^whsec_/)
    assert.notEqual(body.secret, created.secret)
    assert.equal(body.endpoint.previousSecretExpiresAt, '2026-11-22T12:00:30.000Z', '24 hours by default')
    const stored = await t.domain.storage.webhookEndpoints.findEndpointById(created.endpoint.id)
    assert.deepEqual([stored?.secret, stored?.previousSecret], [body.secret, created.secret])
    const short = await t.call('POST', `${BASE}/${created.endpoint.id}/rotate-secret`, { expiresInSeconds: 600 })
    secretsSeen.push(short.json().secret)
    assert.equal(short.json().endpoint.previousSecretExpiresAt, '2026-11-21T12:10:30.000Z')
    assert.equal((await t.call('POST', `${BASE}/${created.endpoint.id}/rotate-secret`, { expiresInSeconds: 604_801 })).statusCode, 400)
    assert.equal((await t.call('POST', `${BASE}/${created.endpoint.id}/rotate-secret`)).statusCode, 400, 'a body is needed: {}')

    const deleted = await t.call('DELETE', `${BASE}/${created.endpoint.id}`)
    assert.equal(deleted.statusCode, 204)
    assert.equal(deleted.body, '')
    assert.equal((await t.call('DELETE', `${BASE}/${created.endpoint.id}`)).statusCode, 404)
    assert.equal((await t.call('GET', `${BASE}/${created.endpoint.id}`)).statusCode, 404)
  })

  test('a read token lists and reads, and is refused every change (403) before anything is done', async () => {
    const reader = (await createAdminToken(t.storage.adminTokens, { name: 'auditor', role: 'read' })).token
    const as = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${reader}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      })
    const id = (await create({ url: URL_, events: ['*'] })).endpoint.id
    const before = await t.storage.webhookEndpoints.findEndpointById(id)
    assert.equal((await as('GET', BASE)).statusCode, 200)
    const one = await as('GET', `${BASE}/${id}`)
    assert.equal(one.statusCode, 200)
    assert.ok(!('secret' in one.json()))
    for (const [method, url, body] of [
      ['POST', BASE, { url: URL_, events: ['*'] }],
      ['PATCH', `${BASE}/${id}`, { enabled: false }],
      ['DELETE', `${BASE}/${id}`, undefined],
      ['POST', `${BASE}/${id}/rotate-secret`, {}],
    ] as const) {
      const res = await as(method, url, body)
      assert.equal(res.statusCode, 403, `${method} ${url}`)
      assert.equal(res.json().code, 'forbidden_role')
    }
    assert.deepEqual(await t.storage.webhookEndpoints.findEndpointById(id), before, 'nothing changed, the secret the same')
  })

  test('every change and read is on the audit log, never a secret; no secret in any log line', async () => {
    const entries = (await t.call('GET', '/admin/v1/audit-log?limit=100')).json().data as Array<{ action: string; details: object }>
    const actions = new Set(entries.map((e) => e.action))
    for (const action of [
      'webhook_endpoint.create',
      'webhook_endpoint.update',
      'webhook_endpoint.delete',
      'webhook_endpoint.rotate_secret',
      'webhook_endpoint.list',
      'webhook_endpoint.read',
    ])
      assert.ok(actions.has(action), action)
    const rotation = entries.find((e) => e.action === 'webhook_endpoint.rotate_secret')
    assert.deepEqual(Object.keys(rotation?.details ?? {}), ['endpointId', 'previousSecretExpiresAt'])
    const reads = (await t.call('GET', '/admin/v1/audit-log?kind=read&limit=100')).json().data as Array<{ action: string }>
    assert.ok(
      reads.some((e) => e.action === 'webhook_endpoint.list'),
      'the reads are of kind read',
    )
    assert.ok(secretsSeen.length >= 4)
    const everything = JSON.stringify(entries) + lines.join('')
    assert.ok(lines.length > 10, 'the log was written')
    for (const secret of secretsSeen) assert.ok(!everything.includes(secret.slice(6)), 'no secret in the audit log or the log')
    assert.ok(!everything.includes('whsec_'))
  })
})

test('the document lists the ten operations (six of endpoints, four of their deliveries), a change needing the admin role', async (t) => {
  const app = await buildAdminTestApp(t, { resolveHost })
  const doc = (await app.call('GET', '/admin/v1/openapi.json')).json()
  const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId: string; responses: object }>>)
    .filter(([path]) => path.startsWith('/webhook-endpoints'))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`))
  assert.deepEqual(operations, [
    'POST /webhook-endpoints createWebhookEndpoint',
    'GET /webhook-endpoints listWebhookEndpoints',
    'GET /webhook-endpoints/{endpointId} getWebhookEndpoint',
    'PATCH /webhook-endpoints/{endpointId} updateWebhookEndpoint',
    'DELETE /webhook-endpoints/{endpointId} deleteWebhookEndpoint',
    'POST /webhook-endpoints/{endpointId}/rotate-secret rotateWebhookEndpointSecret',
    'GET /webhook-endpoints/{endpointId}/deliveries listWebhookDeliveries',
    'GET /webhook-endpoints/{endpointId}/deliveries/{deliveryId} getWebhookDelivery',
    'POST /webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry retryWebhookDelivery',
    'POST /webhook-endpoints/{endpointId}/replay replayWebhookEndpoint',
  ])
  assert.ok('403' in doc.paths['/webhook-endpoints/{endpointId}'].delete.responses)
  assert.ok('403' in doc.paths['/webhook-endpoints/{endpointId}/replay'].post.responses)
  assert.ok(!('403' in doc.paths['/webhook-endpoints/{endpointId}/deliveries'].get.responses))
  assert.ok(!('403' in doc.paths['/webhook-endpoints/{endpointId}'].get.responses))
  assert.ok(!JSON.stringify(doc.components.schemas.AdminWebhookEndpoint).includes('"secret"'))
})

const res404Body = (res: { statusCode: number; body: string }) => {
  assert.equal(res.statusCode, 404)
  return res.body
}
