/**
 * Storage of webhook deliveries (src/webhooks/delivery.ts, migration 023), the same assertions on
 * SQLite and PostgreSQL: an event is queued for the dispatcher, in its change's transaction, while
 * an endpoint is enabled; the dispatcher fans each out once, to the endpoints that receive it;
 * concurrent claimers never claim the same delivery; a lease makes a delivery not due until it
 * lapses, then any claimer takes it again and the lost attempt is logged; an outcome is written
 * while its claim holds the lease; an endpoint failing for too long, or answered 410, is disabled
 * with its event and audit entry; retry and replay; deliveries go with their endpoint and their
 * event. On PostgreSQL: an event whose change took a lower seq and committed later is still
 * dispatched (no seq cursor), and dispatchers at once fan each event out once.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import pg from 'pg'
import type { RecordedChange } from '../../src/changes/audit-log.js'
import { NOTHING_RECORDED } from '../../src/changes/change-recorder.js'
import { type EventDraft, type EventOwner, eventDraft } from '../../src/events/event.js'
import { EventRetention } from '../../src/events/retention.js'
import { petCreated } from '../../src/pets/events.js'
import { ManualClock } from '../../src/shared/clock.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { LOST_ATTEMPT_ERROR } from '../../src/storage/webhook-delivery-row.js'
import type { AttemptOutcome, DeliveryClaim } from '../../src/webhooks/delivery.js'
import type { WebhookEndpointRecord } from '../../src/webhooks/endpoint.js'
import { fanOut } from '../../src/webhooks/fan-out.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema, STORE_ENGINES } from '../helpers/stores.js'

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0)
const DAY = 86_400_000
const LEASE = T0 + 20_000
const CHAIN: EventOwner = { customerId: null, keyChainId: 'key_a', keyId: 'key_a' }
const ACME: EventOwner = { customerId: 'cus_0000000000000001', keyChainId: null, keyId: 'key_b' }

const endpoint = (id: string, fields: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord => ({
  id,
  url: `https://hooks.example.com/${id}`,
  description: null,
  events: ['*'],
  customerId: null,
  enabled: true,
  secret: `whsec_${id}`,
  previousSecret: null,
  previousSecretExpiresAt: null,
  failingSince: null,
  disabledReason: null,
  createdAt: T0,
  updatedAt: T0,
  ...fields,
})

async function withCustomer(storage: Storage): Promise<void> {
  await storage.customers.insertCustomer(
    { id: ACME.customerId!, name: 'Acme', plan: 'pro', perMinute: 300, perDay: 10_000, metadata: null, createdAt: T0, updatedAt: T0 },
    { audit: [] },
  )
}

const addEndpoint = (storage: Storage, e: WebhookEndpointRecord) => storage.webhookEndpoints.insertEndpoint(e, { audit: [] })
const write = async (storage: Storage, ...events: EventDraft[]) => {
  await storage.audit.write({ audit: [], events })
  return events
}
const petEvent = (n: number, owner = CHAIN, type: EventDraft['type'] = 'pet.created') => eventDraft(type, owner, T0 + n, { id: n })
const deliveriesOf = async (storage: Storage, endpointId: string) => storage.webhookDeliveries.pageDeliveries({ endpointId, limit: 1000 })
const outcome = (claim: DeliveryClaim, statusCode: number | null, fields: Partial<AttemptOutcome> = {}): AttemptOutcome => ({
  claim,
  endpointId: claim.endpoint.id,
  attempt: {
    startedAt: T0,
    durationMs: 5,
    statusCode,
    error: statusCode === 204 ? null : 'the receiver answered 500',
    responseExcerpt: null,
  },
  next: statusCode === 204 ? { status: 'delivered', nextAttemptAt: null } : { status: 'pending', nextAttemptAt: T0 + 5_000 },
  effect: statusCode === 204 ? { kind: 'succeeded' } : { kind: 'failed', disableIfFailingSince: T0 - 5 * DAY },
  now: T0,
  ...fields,
})
const disabledRecord = (e: WebhookEndpointRecord): RecordedChange => ({
  audit: [
    {
      at: T0,
      actor: { type: 'system', id: 'webhook-delivery' },
      action: 'webhook_endpoint.update',
      keyId: null,
      details: { endpointId: e.id, disabledReason: e.disabledReason },
      requestId: null,
    },
  ],
  events: [eventDraft('webhook_endpoint.disabled', { customerId: e.customerId, keyChainId: null, keyId: null }, T0, { id: e.id })],
})

for (const engine of STORE_ENGINES) {
  describe(`webhook deliveries on ${engine.name}`, () => {
    test('a dispatch batch is bounded in deliveries: with ten endpoints it takes a tenth of the events', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      for (let i = 10; i < 20; i++) await addEndpoint(storage, endpoint(`we_00000000000000${i}`))
      await write(storage, ...Array.from({ length: 25 }, (_, n) => petEvent(n)))
      assert.equal(await storage.webhookDeliveries.dispatch(100, T0, fanOut), 10, '100 deliveries: 10 events to 10 endpoints')
      assert.equal(await storage.webhookDeliveries.dispatch(5, T0, fanOut), 1, 'one event at least, whatever the bound')
      assert.equal(await storage.webhookDeliveries.dispatch(1000, T0, fanOut), 14)
      assert.equal((await deliveriesOf(storage, 'we_0000000000000010')).length, 25)
      assert.deepEqual(await storage.webhookDeliveries.queueStats().then((q) => [q.pending, q.undispatched]), [250, 0])
    })

    test('an event is queued only while an endpoint is enabled; dispatch fans each out once, by customer and type', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await withCustomer(storage)
      await write(storage, petEvent(1))
      assert.equal(await storage.webhookDeliveries.dispatch(500, T0, fanOut), 0, 'with no endpoint, nothing was queued')
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await addEndpoint(storage, endpoint('we_0000000000000002', { customerId: ACME.customerId, events: ['order.placed'] }))
      await addEndpoint(storage, endpoint('we_0000000000000003', { enabled: false, disabledReason: 'manual' }))
      const [placed, pet, other] = await write(
        storage,
        petEvent(2, ACME, 'order.placed'),
        petEvent(3, ACME),
        petEvent(4, CHAIN, 'order.placed'),
      )
      assert.deepEqual((await storage.webhookDeliveries.queueStats()).undispatched, 3)
      assert.equal(
        await storage.webhookDeliveries.dispatch(4, T0, fanOut),
        2,
        'a batch: 4 deliveries at most, two events with two endpoints',
      )
      assert.equal(await storage.webhookDeliveries.dispatch(500, T0, fanOut), 1)
      assert.equal(await storage.webhookDeliveries.dispatch(500, T0, fanOut), 0, 'each event once')
      const all = await deliveriesOf(storage, 'we_0000000000000001')
      assert.deepEqual(
        all.map((d) => d.eventId),
        [other!.id, pet!.id, placed!.id],
        'newest first',
      )
      for (const d of all) {
        assert.equal(d.status, 'pending')
        assert.equal(d.attempts, 0)
        assert.equal(d.nextAttemptAt, T0)
        assert.match(d.id, /^dlv_/)
      }
      assert.deepEqual(
        (await deliveriesOf(storage, 'we_0000000000000002')).map((d) => d.eventId),
        [placed!.id],
        'its customer’s order.placed only',
      )
      assert.deepEqual(await deliveriesOf(storage, 'we_0000000000000003'), [], 'a disabled endpoint gets nothing')
      assert.deepEqual(await storage.webhookDeliveries.queueStats(), { pending: 4, oldestPendingAt: T0, undispatched: 0 })
    })

    test("a pet's create queues its event like any change: none with no endpoint, one delivery with one (on PostgreSQL, one statement)", async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const create = (name: string) => storage.pets.createPet({ name, categoryId: 1 }, petCreated(CHAIN, T0))
      await create('before')
      assert.equal(await storage.webhookDeliveries.dispatch(500, T0, fanOut), 0, 'with no endpoint, nothing was queued')
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      const rex = await create('Rex')
      assert.equal(await storage.webhookDeliveries.dispatch(500, T0, fanOut), 1)
      const [delivery] = await deliveriesOf(storage, 'we_0000000000000001')
      const events = (await storage.events.list({ limit: 10 })).events
      assert.equal(delivery?.eventId, events.at(-1)?.id)
      assert.equal(events.at(-1)?.data, JSON.stringify(rex), 'the event is the pet as created, its id the one the insert gave')
    })

    test('concurrent claimers never claim the same delivery; a lease keeps it until it lapses, then any claims it, the lost attempt logged', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await write(storage, ...Array.from({ length: 24 }, (_, i) => petEvent(i)))
      await storage.webhookDeliveries.dispatch(500, T0, fanOut)
      const rounds = await Promise.all(Array.from({ length: 6 }, () => storage.webhookDeliveries.claimDue(T0, 5, LEASE)))
      const ids = rounds.flatMap((r) => r.claims.map((c) => c.deliveryId))
      assert.equal(new Set(ids).size, ids.length, 'no delivery claimed twice')
      assert.equal(ids.length, 24, 'and every one claimed')
      for (const claim of rounds.flatMap((r) => r.claims)) {
        assert.equal(claim.attempt, 1)
        assert.equal(claim.lease, LEASE)
        assert.equal(claim.endpoint.secret, 'whsec_we_0000000000000001')
        assert.equal(claim.event.type, 'pet.created')
        assert.deepEqual(JSON.parse(claim.event.data), { id: Number(claim.event.occurredAt - T0) })
      }
      assert.deepEqual((await storage.webhookDeliveries.claimDue(LEASE - 1, 100, LEASE + 20_000)).claims, [], 'leased: not due')
      const [listed] = await deliveriesOf(storage, 'we_0000000000000001')
      assert.equal(listed!.nextAttemptAt, LEASE, 'due again when the lease ends')
      const again = await storage.webhookDeliveries.claimDue(LEASE, 100, LEASE + 20_000)
      assert.equal(again.claims.length, 24, 'every lapsed lease is claimable again')
      assert.ok(again.claims.every((c) => c.attempt === 2))
      const found = await storage.webhookDeliveries.findDelivery('we_0000000000000001', again.claims[0]!.deliveryId)
      assert.deepEqual(found!.attempts, [
        { attempt: 1, startedAt: T0, durationMs: null, statusCode: null, error: LOST_ATTEMPT_ERROR, responseExcerpt: null },
      ])
    })

    test('an outcome is written while its claim holds the lease; after a lost lease the attempt is logged, the state left to the new claim', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await write(storage, petEvent(1))
      await storage.webhookDeliveries.dispatch(500, T0, fanOut)
      const [first] = (await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims
      const [second] = (await storage.webhookDeliveries.claimDue(LEASE, 10, LEASE + 20_000)).claims
      // The first claimant answers late: its attempt replaces the "no outcome" entry, the state is not its.
      const late = await storage.webhookDeliveries.recordAttempt(outcome(first!, 500), disabledRecord)
      assert.equal(late.stateWritten, false)
      const mine = await storage.webhookDeliveries.recordAttempt(outcome(second!, 204), disabledRecord)
      assert.equal(mine.stateWritten, true)
      const found = await storage.webhookDeliveries.findDelivery('we_0000000000000001', second!.deliveryId)
      assert.deepEqual(
        found!.attempts.map((a) => [a.attempt, a.statusCode, a.error]),
        [
          [1, 500, 'the receiver answered 500'],
          [2, 204, null],
        ],
      )
      assert.equal(found!.delivery.status, 'delivered')
      assert.equal(found!.delivery.nextAttemptAt, null)
      assert.equal(found!.delivery.attempts, 2)
      assert.equal(found!.delivery.lastStatusCode, 204)
      assert.deepEqual((await storage.webhookDeliveries.claimDue(LEASE * 2, 10, LEASE * 3)).claims, [], 'delivered: never due')
    })

    test('failures set failing_since once, a success clears it; failing longer than the limit disables the endpoint with its event', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await write(storage, petEvent(1), petEvent(2), petEvent(3), petEvent(4))
      await storage.webhookDeliveries.dispatch(500, T0, fanOut)
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
      const at = (ms: number, claim: DeliveryClaim, status: number) =>
        storage.webhookDeliveries.recordAttempt(
          outcome(claim, status, {
            now: ms,
            ...(status === 204 ? {} : { effect: { kind: 'failed', disableIfFailingSince: ms - 5 * DAY } }),
          }),
          disabledRecord,
        )
      await at(T0 + 1, claims[0]!, 500)
      const failing = await storage.webhookEndpoints.findEndpointById('we_0000000000000001')
      assert.equal(failing!.failingSince, T0 + 1)
      assert.ok(failing!.updatedAt > T0, 'updated_at moved: an operator’s update over the old one fails')
      await at(T0 + 2, claims[1]!, 500)
      assert.equal((await storage.webhookEndpoints.findEndpointById('we_0000000000000001'))!.failingSince, T0 + 1, 'since the first')
      await at(T0 + 3, claims[2]!, 204)
      assert.equal((await storage.webhookEndpoints.findEndpointById('we_0000000000000001'))!.failingSince, null, 'a success clears it')
      await at(T0 + 4, claims[3]!, 500)
      // Failing since T0 + 4: a failure 5 days later is not yet more than 5 days of failing; one a moment after is.
      const again = (await storage.webhookDeliveries.claimDue(T0 + 10 * DAY, 10, T0 + 11 * DAY)).claims
      assert.equal(again.length, 3, 'the three failed ones are due again')
      const before = await at(T0 + 4 + 5 * DAY, again[0]!, 500)
      assert.equal(before.disabled, undefined)
      assert.equal((await storage.webhookEndpoints.findEndpointById('we_0000000000000001'))!.enabled, true)
      const after = await at(T0 + 5 + 5 * DAY, again[1]!, 500)
      assert.equal(after.disabled?.enabled, false)
      assert.equal(after.disabled?.disabledReason, 'failing')
      const disabled = await storage.webhookEndpoints.findEndpointById('we_0000000000000001')
      assert.deepEqual([disabled!.enabled, disabled!.disabledReason, disabled!.failingSince], [false, 'failing', T0 + 4])
      const events = (await storage.events.list({ limit: 100, types: ['webhook_endpoint.disabled'] })).events
      assert.deepEqual(
        events.map((e) => JSON.parse(e.data)),
        [{ id: 'we_0000000000000001' }],
      )
      const audit = (await storage.audit.list({ limit: 10 })).entries
      assert.deepEqual(
        audit.map((e) => [e.actor.type, e.action, e.details.disabledReason]),
        [['system', 'webhook_endpoint.update', 'failing']],
      )
    })

    test('a 410 disables the endpoint (gone) with its event; its due deliveries are then failed unsent', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await write(storage, petEvent(1), petEvent(2))
      await storage.webhookDeliveries.dispatch(500, T0, fanOut)
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 1, LEASE)
      const gone = await storage.webhookDeliveries.recordAttempt(
        outcome(claims[0]!, 410, { next: { status: 'failed', nextAttemptAt: null }, effect: { kind: 'gone' } }),
        disabledRecord,
      )
      assert.equal(gone.disabled?.disabledReason, 'gone')
      assert.equal((await storage.events.list({ limit: 10, types: ['webhook_endpoint.disabled'] })).events.length, 1)
      const next = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
      assert.deepEqual(next, { claims: [], notSent: 1 })
      const statuses = (await deliveriesOf(storage, 'we_0000000000000001')).map((d) => [d.status, d.lastError])
      assert.deepEqual(statuses, [
        ['failed', 'not sent: the endpoint is disabled (gone)'],
        ['failed', 'the receiver answered 500'],
      ])
    })

    test('retry makes a delivery due now whatever its status; replay makes an endpoint’s events since a time due, new and old', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await withCustomer(storage)
      const acme = endpoint('we_0000000000000002', { customerId: ACME.customerId, events: ['order.placed'] })
      await addEndpoint(storage, acme)
      const [early, late, other] = await write(
        storage,
        eventDraft('order.placed', ACME, T0 - DAY, { id: 1 }),
        eventDraft('order.placed', ACME, T0, { id: 2 }),
        eventDraft('order.placed', CHAIN, T0, { id: 3 }),
      )
      await storage.webhookDeliveries.dispatch(500, T0, fanOut)
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
      assert.deepEqual(claims.map((c) => c.event.id).sort(), [early!.id, late!.id].sort(), 'the other customer’s event is not acme’s')
      for (const claim of claims) await storage.webhookDeliveries.recordAttempt(outcome(claim, 204), disabledRecord)
      const earlyDelivery = claims.find((c) => c.event.id === early!.id)!.deliveryId
      const record = (action: 'webhook_delivery.retry' | 'webhook_endpoint.replay'): RecordedChange => ({
        audit: [{ at: T0, actor: { type: 'cli', id: 'ops' }, action, keyId: null, details: {}, requestId: null }],
      })
      // Retry: a delivered delivery is due again, now; its attempts stand.
      const retried = await storage.webhookDeliveries.retryDelivery(acme.id, earlyDelivery, T0 + 60_000, record('webhook_delivery.retry'))
      assert.deepEqual([retried?.status, retried?.nextAttemptAt, retried?.attempts], ['pending', T0 + 60_000, 1])
      assert.equal(
        await storage.webhookDeliveries.retryDelivery('we_0000000000000009', earlyDelivery, T0, record('webhook_delivery.retry')),
        undefined,
        'only under its own endpoint',
      )
      const [again] = (await storage.webhookDeliveries.claimDue(T0 + 60_000, 10, LEASE + 60_000)).claims
      assert.deepEqual([again?.deliveryId, again?.attempt], [earlyDelivery, 2])
      await storage.webhookDeliveries.recordAttempt(outcome(again!, 204), disabledRecord)
      // Replay since T0 - 1 h: the events at or after it that the endpoint receives, made due now; the early one is before it.
      const range = await storage.webhookDeliveries.replayRange(T0 - 3_600_000)
      const batch = await storage.webhookDeliveries.replayBatch(
        { endpoint: acme, since: T0 - 3_600_000, ...range, limit: 1000, now: T0 + 120_000, fanOut },
        record('webhook_endpoint.replay'),
      )
      assert.deepEqual(batch, { enqueued: 1, lastSeq: range.uptoSeq, done: true })
      assert.deepEqual(
        (await deliveriesOf(storage, acme.id)).map((d) => [d.eventId, d.status, d.nextAttemptAt]),
        [
          [late!.id, 'pending', T0 + 120_000],
          [early!.id, 'delivered', null],
        ],
      )
      // A replay of an event the endpoint was never sent makes its delivery.
      const everything = endpoint('we_0000000000000003', { events: ['order.placed'] })
      await addEndpoint(storage, everything)
      const made = await storage.webhookDeliveries.replayBatch(
        {
          endpoint: everything,
          since: T0 - 2 * DAY,
          ...(await storage.webhookDeliveries.replayRange(T0 - 2 * DAY)),
          limit: 2,
          now: T0,
          fanOut,
        },
        NOTHING_RECORDED,
      )
      assert.deepEqual([made.enqueued, made.done], [2, false], 'a batch at most')
      assert.deepEqual(
        (await deliveriesOf(storage, everything.id)).map((d) => d.eventId),
        [late!.id, early!.id],
      )
      assert.ok(other)
      const actions = (await storage.audit.list({ limit: 10 })).entries.map((e) => e.action)
      assert.deepEqual(actions, ['webhook_delivery.retry', 'webhook_endpoint.replay'])
    })

    test('deliveries and their attempts go with their endpoint, and with their event (retention)', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await addEndpoint(storage, endpoint('we_0000000000000002'))
      const old = eventDraft('pet.created', CHAIN, T0 - 31 * DAY, { id: 1 })
      await write(storage, old, petEvent(2))
      await storage.webhookDeliveries.dispatch(500, T0, fanOut)
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
      for (const claim of claims) await storage.webhookDeliveries.recordAttempt(outcome(claim, 500), disabledRecord)
      await new EventRetention(storage.events, { keepMs: 30 * DAY, clock: new ManualClock(T0) }).run()
      assert.deepEqual(
        (await deliveriesOf(storage, 'we_0000000000000001')).map((d) => d.eventId),
        [claims.find((c) => c.event.id !== old.id)!.event.id],
        'the swept event took its delivery',
      )
      await storage.webhookEndpoints.deleteEndpoint('we_0000000000000001', () => ({ audit: [] }))
      assert.deepEqual(await deliveriesOf(storage, 'we_0000000000000001'), [])
      assert.equal((await deliveriesOf(storage, 'we_0000000000000002')).length, 1)
      assert.equal((await storage.webhookDeliveries.queueStats()).pending, 1)
    })
  })
}

describe('webhook dispatch on PostgreSQL, several writers and dispatchers', () => {
  test('an event whose change took a lower seq and committed after a higher one is dispatched all the same', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `test_${randomBytes(6).toString('hex')}`
    const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
    t.after(async () => {
      await client.end().catch(() => {})
      await storage.close()
      await dropSchema(schema)
    })
    await addEndpoint(storage, endpoint('we_0000000000000001'))
    await client.connect()
    // A change in flight: its event has its seq, its outbox row is not committed.
    await client.query('BEGIN')
    const { rows } = await client.query(
      `WITH written AS (INSERT INTO events (id, type, occurred_at, data, customer_id, key_chain_id, key_id)
         VALUES ('evt_slow', 'pet.created', ${T0}, '{"id":1}', NULL, 'key_a', 'key_a') RETURNING seq)
       INSERT INTO webhook_outbox (seq) SELECT seq FROM written RETURNING seq`,
    )
    const slowSeq = Number(rows[0].seq)
    const [fast] = await write(storage, petEvent(2))
    assert.equal(await storage.webhookDeliveries.dispatch(500, T0, fanOut), 1, 'the committed one')
    await client.query('COMMIT')
    assert.equal(await storage.webhookDeliveries.dispatch(500, T0, fanOut), 1, 'the one committed later, with its lower seq')
    const listed = await deliveriesOf(storage, 'we_0000000000000001')
    assert.deepEqual(listed.map((d) => d.eventId).sort(), ['evt_slow', fast!.id].sort())
    assert.ok(slowSeq < listed.find((d) => d.eventId === fast!.id)!.eventSeq)
  })

  test('dispatchers at once fan each event out once', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const engine = STORE_ENGINES.find((e) => e.name === 'PostgreSQL')!
    const storage = await engine.open(t)
    if (!storage) return
    await addEndpoint(storage, endpoint('we_0000000000000001'))
    for (let i = 0; i < 10; i++) await write(storage, ...Array.from({ length: 50 }, (_, j) => petEvent(i * 50 + j)))
    const taken = await Promise.all(
      Array.from({ length: 4 }, async () => {
        let n = 0
        for (;;) {
          const batch = await storage.webhookDeliveries.dispatch(25, T0, fanOut)
          if (batch === 0) return n
          n += batch
        }
      }),
    )
    assert.equal(
      taken.reduce((a, b) => a + b, 0),
      500,
    )
    const listed = await deliveriesOf(storage, 'we_0000000000000001')
    assert.equal(listed.length, 500)
    assert.equal(new Set(listed.map((d) => d.eventId)).size, 500)
  })
})

test('SQLite: the delivery repository prepares each statement once, not at every claim and attempt', async (t) => {
  const storage = await STORE_ENGINES.find((e) => e.name === 'SQLite')!.open(t)
  // The database handle the repository was built with: counts what is prepared on it from now on.
  const db = (storage as unknown as { db: { prepare: (sql: string) => unknown } }).db
  const prepare = db.prepare.bind(db)
  let prepared = 0
  db.prepare = (sql: string) => {
    prepared++
    return prepare(sql)
  }
  await addEndpoint(storage!, endpoint('we_0000000000000001'))
  const round = async (n: number) => {
    await write(storage!, petEvent(n))
    await storage!.webhookDeliveries.dispatch(1000, T0, fanOut)
    const { claims } = await storage!.webhookDeliveries.claimDue(T0 + n, 10, LEASE + n)
    assert.equal(claims.length, 1)
    await storage!.webhookDeliveries.recordAttempt(outcome(claims[0]!, 204), disabledRecord)
    await storage!.webhookDeliveries.queueStats()
  }
  await round(1)
  const afterFirst = prepared
  assert.ok(afterFirst > 0, 'the first round prepared what it runs')
  await round(2)
  await round(3)
  assert.equal(prepared, afterFirst, 'later rounds reuse them')
})
