/**
 * The rules of webhook endpoints (src/webhooks/endpoint-service.ts), for the admin API and the CLI
 * alike: the URL's destination, the closed list of event types, the customer, the secret made and
 * rotated (the old one signing beside the new until its time), enabling and disabling, and the
 * audit entries of each change, which never hold a secret.
 */
import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import type { ChangeContext } from '../../src/changes/audit-log.js'
import { ChangeRecorder } from '../../src/changes/change-recorder.js'
import { ManualClock } from '../../src/shared/clock.js'
import { Refusal } from '../../src/shared/refusal.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { WebhookEndpointRecord } from '../../src/webhooks/endpoint.js'
import { WebhookEndpointService } from '../../src/webhooks/endpoint-service.js'
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types.js'
import { signingSecrets } from '../../src/webhooks/secret.js'

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0)
const CTX: ChangeContext = { actor: { type: 'cli', id: 'ops' }, requestId: null }
const URL_ = 'https://hooks.example.com/animal-store'

function setUp(t: TestContext, { allowPrivateNetworks = false } = {}) {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  t.after(() => storage.close())
  const clock = new ManualClock(T0)
  const service = new WebhookEndpointService({
    endpoints: storage.webhookEndpoints,
    recorder: new ChangeRecorder(storage.audit, clock),
    customers: storage.customers,
    destinations: {
      allowPrivateNetworks,
      resolve: async (host) => (host === 'internal.example.com' ? ['10.0.0.5'] : ['93.184.215.14']),
    },
    clock,
  })
  const audit = async () => (await storage.audit.list({ limit: 100 })).entries
  return { storage, clock, service, audit }
}

/** The refusal a call makes: its kind, field and message. */
async function refusal(call: Promise<unknown>): Promise<{ kind: string; field: string | undefined; message: string }> {
  try {
    await call
  } catch (error) {
    if (error instanceof Refusal) return { kind: error.kind, field: error.field, message: error.message }
    throw error
  }
  assert.fail('the call was not refused')
}

test('create: a whsec_ secret, the events in the list’s order, the URL as parsed, enabled; audited without the secret', async (t) => {
  const { service, audit } = setUp(t)
  const created = await service.createEndpoint(
    { url: 'https://Hooks.Example.com:443/animal-store', events: ['order.expired', 'order.placed'], description: '  Warehouse  ' },
    CTX,
  )
  assert.match(created.id, /^we_[0-9A-Za-z]{16}$/)
  assert.match(created.secret, /^whsec_/)
  assert.deepEqual(
    { ...created, id: '', secret: '' },
    {
      id: '',
      url: URL_,
      description: 'Warehouse',
      events: ['order.placed', 'order.expired'],
      customerId: null,
      enabled: true,
      secret: '',
      previousSecret: null,
      previousSecretExpiresAt: null,
      failingSince: null,
      disabledReason: null,
      createdAt: T0,
      updatedAt: T0,
    },
  )
  const [entry] = await audit()
  assert.equal(entry?.action, 'webhook_endpoint.create')
  assert.deepEqual(entry?.details, {
    endpointId: created.id,
    url: URL_,
    events: ['order.placed', 'order.expired'],
    customerId: null,
    enabled: true,
    disabledReason: null,
  })
  assert.ok(!JSON.stringify(await audit()).includes(created.secret.slice(6, 20)))
})

test('events: a list of known types, each once, or "*" alone', async (t) => {
  const { service } = setUp(t)
  const all = await service.createEndpoint({ url: URL_, events: ['*'] }, CTX)
  assert.deepEqual(all.events, ['*'])
  const every = await service.createEndpoint({ url: URL_, events: [...WEBHOOK_EVENT_TYPES].reverse() }, CTX)
  assert.deepEqual(every.events, [...WEBHOOK_EVENT_TYPES])
  for (const [events, message] of [
    [[], /events must list event types, or be \["\*"\]/],
    [['order.shipped'], /unknown event type "order.shipped"; the types are pet.created, /],
    [['*', 'order.placed'], /"\*" stands alone/],
    [['order.placed', 'order.placed'], /must not name a type twice/],
    ['order.placed', /events must list event types/],
  ] as const) {
    const refused = await refusal(service.createEndpoint({ url: URL_, events: events as unknown as string[] }, CTX))
    assert.equal(refused.kind, 'invalid')
    assert.equal(refused.field, 'events')
    assert.match(refused.message, message)
  }
})

test('url: judged before anything is written; a customer must exist; a description has its rules', async (t) => {
  const { service, storage, audit } = setUp(t)
  for (const [url, message] of [
    ['http://hooks.example.com/x', /url must use https/],
    ['https://127.0.0.1/x', /url must not point at a loopback address: 127\.0\.0\.1/],
    ['https://internal.example.com/x', /url must not point at a private address: internal\.example\.com resolves to 10\.0\.0\.5/],
    ['https://x.example.com/\nx', /url must not contain control characters/],
    [`https://x.example.com/${'a'.repeat(2048)}`, /url must be 1 to 2048 characters/],
  ] as const) {
    const refused = await refusal(service.createEndpoint({ url, events: ['*'] }, CTX))
    assert.deepEqual([refused.kind, refused.field], ['invalid', 'url'])
    assert.match(refused.message, message)
  }
  const unknown = await refusal(service.createEndpoint({ url: URL_, events: ['*'], customerId: 'cus_0000000000000000' }, CTX))
  assert.deepEqual(unknown, { kind: 'invalid', field: 'customerId', message: 'customerId: no customer with id cus_0000000000000000' })
  for (const description of ['', '   ', 'a'.repeat(201), 'tab\there', 'evil\u202e'])
    assert.equal((await refusal(service.createEndpoint({ url: URL_, events: ['*'], description }, CTX))).field, 'description')
  assert.deepEqual(await storage.webhookEndpoints.pageEndpoints({ limit: 10 }), [], 'nothing written')
  assert.deepEqual(await audit(), [], 'nothing recorded')

  await storage.customers.insertCustomer(
    { id: 'cus_0000000000000001', name: 'Acme', plan: 'pro', perMinute: 300, perDay: 10_000, metadata: null, createdAt: T0, updatedAt: T0 },
    { audit: [] },
  )
  const own = await service.createEndpoint({ url: URL_, events: ['order.placed'], customerId: 'cus_0000000000000001' }, CTX)
  assert.equal(own.customerId, 'cus_0000000000000001')
})

test('WEBHOOK_ALLOW_PRIVATE_NETWORKS: an http URL on loopback is taken', async (t) => {
  const { service } = setUp(t, { allowPrivateNetworks: true })
  assert.equal((await service.createEndpoint({ url: 'http://127.0.0.1:9/hook', events: ['*'] }, CTX)).url, 'http://127.0.0.1:9/hook')
})

test('update: only the fields given; disabling says why, enabling again starts afresh; a no-op is a read', async (t) => {
  const { service, storage, clock, audit } = setUp(t)
  const created = await service.createEndpoint({ url: URL_, events: ['order.placed'] }, CTX)
  clock.advance(1000)
  const moved = await service.updateEndpoint(created.id, { url: 'https://other.example.com/in', events: ['*'] }, CTX)
  assert.deepEqual([moved.url, moved.events, moved.description, moved.enabled], ['https://other.example.com/in', ['*'], null, true])
  assert.equal(moved.updatedAt, T0 + 1000)
  assert.equal(moved.secret, created.secret, 'an update keeps the secret')
  assert.equal((await refusal(service.updateEndpoint(created.id, { url: 'https://10.1.1.1/' }, CTX))).field, 'url')

  const disabled = await service.updateEndpoint(created.id, { enabled: false }, CTX)
  assert.deepEqual([disabled.enabled, disabled.disabledReason], [false, 'manual'])
  // As a delivery would leave it: disabled for failing, since some time.
  await storage.webhookEndpoints.updateEndpoint(
    created.id,
    disabled.updatedAt,
    { ...disabled, disabledReason: 'failing', failingSince: T0 - 5 * 86_400_000, updatedAt: disabled.updatedAt + 1 },
    { audit: [] },
  )
  const again = await service.updateEndpoint(created.id, { enabled: false }, CTX)
  assert.equal(again.disabledReason, 'failing', 'disabling a disabled endpoint keeps its reason')
  const enabled = await service.updateEndpoint(created.id, { enabled: true }, CTX)
  assert.deepEqual([enabled.enabled, enabled.disabledReason, enabled.failingSince], [true, null, null])

  const cleared = await service.updateEndpoint(created.id, { description: 'x' }, CTX)
  assert.equal((await service.updateEndpoint(created.id, { description: null }, CTX)).description, null)
  assert.equal(cleared.description, 'x')

  const actions = (await audit()).map((e) => [e.action, e.details.changed])
  assert.deepEqual(actions, [
    ['webhook_endpoint.create', undefined],
    ['webhook_endpoint.update', ['url', 'events']],
    ['webhook_endpoint.update', ['enabled']],
    ['webhook_endpoint.update', []],
    ['webhook_endpoint.update', ['enabled']],
    ['webhook_endpoint.update', ['description']],
    ['webhook_endpoint.update', ['description']],
  ])
  assert.equal((await refusal(service.updateEndpoint('we_0000000000000000', { enabled: true }, CTX))).kind, 'not_found')
})

test('an update retries over a change made in between (a delivery marking the endpoint failing), and keeps it', async (t) => {
  const { service, storage } = setUp(t)
  const created = await service.createEndpoint({ url: URL_, events: ['*'] }, CTX)
  const find = storage.webhookEndpoints.findEndpointById.bind(storage.webhookEndpoints)
  let raced = false
  storage.webhookEndpoints.findEndpointById = async (id) => {
    const read = await find(id)
    if (!raced && read !== undefined) {
      raced = true
      await storage.webhookEndpoints.updateEndpoint(
        id,
        read.updatedAt,
        { ...read, failingSince: T0, updatedAt: read.updatedAt + 1 },
        { audit: [] },
      )
    }
    return read
  }
  const updated = await service.updateEndpoint(created.id, { description: 'after the race' }, CTX)
  assert.deepEqual([updated.description, updated.failingSince], ['after the race', T0])
})

test('rotate: a new secret; the old one signs beside it for 24 h by default, or as long as asked, or not at all', async (t) => {
  const { service, clock, audit } = setUp(t)
  const created = await service.createEndpoint({ url: URL_, events: ['*'] }, CTX)
  clock.advance(1000)
  const rotated = await service.rotateSecret(created.id, {}, CTX)
  assert.notEqual(rotated.secret, created.secret)
  assert.equal(rotated.previousSecret, created.secret)
  assert.equal(rotated.previousSecretExpiresAt, T0 + 1000 + 86_400_000)
  assert.deepEqual(signingSecrets(rotated, T0 + 2000), [rotated.secret, created.secret])
  assert.deepEqual(signingSecrets(rotated, T0 + 1000 + 86_400_000), [rotated.secret])

  // Rotated again while the first previous secret still signs: that one stops, two sign at most.
  const twice = await service.rotateSecret(created.id, { expiresInSeconds: 60 }, CTX)
  assert.deepEqual(signingSecrets(twice, clock.now()), [twice.secret, rotated.secret])
  assert.equal(twice.previousSecretExpiresAt, clock.now() + 60_000)
  const atOnce = await service.rotateSecret(created.id, { expiresInSeconds: 0 }, CTX)
  assert.deepEqual([atOnce.previousSecret, atOnce.previousSecretExpiresAt], [null, null])
  for (const expiresInSeconds of [-1, 604_801, 1.5])
    assert.equal((await refusal(service.rotateSecret(created.id, { expiresInSeconds }, CTX))).field, 'expiresInSeconds')

  const entries = (await audit()).filter((e) => e.action === 'webhook_endpoint.rotate_secret')
  assert.deepEqual(
    entries.map((e) => e.details),
    [
      { endpointId: created.id, previousSecretExpiresAt: T0 + 1000 + 86_400_000 },
      { endpointId: created.id, previousSecretExpiresAt: clock.now() + 60_000 },
      { endpointId: created.id, previousSecretExpiresAt: null },
    ],
  )
  const text = JSON.stringify(await audit())
  for (const secret of [created.secret, rotated.secret, twice.secret, atOnce.secret])
    assert.ok(!text.includes(secret.slice(6)), 'no secret on record')
})

test('list and get: pages by id with filters, on record when the caller says who it is; delete once', async (t) => {
  const { service, audit } = setUp(t)
  const made: WebhookEndpointRecord[] = []
  for (let i = 0; i < 3; i++) made.push(await service.createEndpoint({ url: URL_, events: ['*'] }, CTX))
  await service.updateEndpoint(made[1]!.id, { enabled: false }, CTX)
  const ids = made.map((e) => e.id).sort()
  const first = await service.listEndpoints({ limit: 2 }, CTX)
  assert.deepEqual(
    first.endpoints.map((e) => e.id),
    ids.slice(0, 2),
  )
  assert.equal(first.nextAfter, ids[1])
  assert.deepEqual(
    (await service.listEndpoints({ limit: 2, after: ids[1] })).endpoints.map((e) => e.id),
    ids.slice(2),
  )
  assert.deepEqual(
    (await service.listEndpoints({ limit: 10, state: 'disabled' })).endpoints.map((e) => e.id),
    [made[1]!.id],
  )
  assert.equal((await refusal(service.listEndpoints({ limit: 0 }))).field, 'limit')
  assert.equal((await refusal(service.listEndpoints({ limit: 10, customerId: 'cus_0000000000000000' }))).field, 'customerId')
  assert.equal((await service.getEndpoint(made[0]!.id, CTX)).id, made[0]!.id)

  const deleted = await service.deleteEndpoint(made[0]!.id, CTX)
  assert.equal(deleted.id, made[0]!.id)
  assert.equal((await refusal(service.deleteEndpoint(made[0]!.id, CTX))).kind, 'not_found')
  assert.equal((await refusal(service.getEndpoint(made[0]!.id))).message, `No webhook endpoint with id ${made[0]!.id}`)
  assert.deepEqual(
    (await audit()).map((e) => e.action).slice(4),
    ['webhook_endpoint.list', 'webhook_endpoint.read', 'webhook_endpoint.delete'],
    'the reads with a caller on record, the others not; the failed delete not',
  )
})
