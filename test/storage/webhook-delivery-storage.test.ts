/**
 * Storage of webhook deliveries (src/webhooks/delivery.ts, migrations 023 and 025), the same
 * assertions on SQLite and PostgreSQL: a claim walks each enabled endpoint's events from its cursor
 * (made or enabled: from the head), in turns, by customer and type, each once, and makes a delivery
 * row only for an attempt it claims; concurrent claimers never claim the same delivery; a lease makes a delivery not due until it
 * lapses, then any claimer takes it again and the lost attempt is logged; an outcome is written
 * while its claim holds the lease; an endpoint failing for too long, or answered 410, is disabled
 * with its event and audit entry; retry and replay; deliveries go with their endpoint and their
 * event. On PostgreSQL: a walk waits behind a writer that took a lower seq and commits later (and
 * only such a writer), and claimers at once make each first attempt once.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import pg from 'pg'
import type { RecordedChange } from '../../src/changes/audit-log.js'
import { NOTHING_RECORDED } from '../../src/changes/change-recorder.js'
import { type EventDraft, type EventOwner, eventDraft } from '../../src/events/event.js'
import { EventRetention } from '../../src/events/retention.js'
import { petCreated } from '../../src/pets/events.js'
import { ManualClock } from '../../src/shared/clock.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { openMigrated } from '../../src/storage/sqlite/open-database.js'
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
    test('a claim takes the first attempts of the events after each cursor, in turns; a delivery row is made only for an attempt', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      for (let i = 10; i < 20; i++) await addEndpoint(storage, endpoint(`we_00000000000000${i}`))
      await write(storage, ...Array.from({ length: 25 }, (_, n) => petEvent(n)))
      const first = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
      assert.deepEqual(
        first.claims.map((c) => c.endpoint.id).sort(),
        Array.from({ length: 10 }, (_, i) => `we_00000000000000${10 + i}`),
        'ten endpoints: one slot each',
      )
      assert.ok(first.claims.every((c) => c.attempt === 1 && c.lease === LEASE && JSON.parse(c.event.data).id === 0))
      assert.deepEqual(await deliveriesOf(storage, 'we_0000000000000010').then((d) => d.map((x) => [x.attempts, x.nextAttemptAt])), [
        [1, LEASE],
      ])
      assert.deepEqual(await storage.webhookDeliveries.queueStats(), { pending: 10, oldestPendingAt: T0, undispatched: 24 })
      // An endpoint that takes nothing (its attempts never end) costs nothing more, however many events are written.
      await write(storage, ...Array.from({ length: 100 }, (_, n) => petEvent(100 + n)))
      assert.equal((await deliveriesOf(storage, 'we_0000000000000010')).length, 1)
      // One endpoint with a backlog among ten with none takes every free slot, in order.
      for (let i = 11; i < 20; i++) await storage.webhookEndpoints.deleteEndpoint(`we_00000000000000${i}`, () => NOTHING_RECORDED)
      const next = await storage.webhookDeliveries.claimDue(T0, 7, LEASE)
      assert.deepEqual(
        next.claims.map((c) => JSON.parse(c.event.data).id),
        [1, 2, 3, 4, 5, 6, 7],
      )
      const rest = await storage.webhookDeliveries.claimDue(T0, 1000, LEASE)
      assert.equal(rest.claims.length, 124 - 7)
      assert.deepEqual((await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims, [], 'each event once')
      assert.equal((await storage.webhookDeliveries.queueStats()).undispatched, 0)
    })

    test('an endpoint is sent the events written after it is made or enabled again, by customer and type, each once', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await withCustomer(storage)
      await write(storage, petEvent(1))
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await addEndpoint(storage, endpoint('we_0000000000000002', { customerId: ACME.customerId, events: ['order.placed'] }))
      const off = endpoint('we_0000000000000003', { enabled: false, disabledReason: 'manual' })
      await addEndpoint(storage, off)
      assert.deepEqual((await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims, [], 'the event before them is not theirs')
      const [placed, pet, other] = await write(
        storage,
        petEvent(2, ACME, 'order.placed'),
        petEvent(3, ACME),
        petEvent(4, CHAIN, 'order.placed'),
      )
      assert.equal((await storage.webhookDeliveries.queueStats()).undispatched, 3)
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
      assert.equal(claims.length, 4)
      assert.deepEqual((await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims, [], 'each event once')
      const all = await deliveriesOf(storage, 'we_0000000000000001')
      assert.deepEqual(
        all.map((d) => d.eventId),
        [other!.id, pet!.id, placed!.id],
        'newest first',
      )
      for (const d of all) {
        assert.deepEqual([d.status, d.attempts, d.nextAttemptAt], ['pending', 1, LEASE])
        assert.match(d.id, /^dlv_/)
      }
      assert.deepEqual(
        (await deliveriesOf(storage, 'we_0000000000000002')).map((d) => d.eventId),
        [placed!.id],
        'its customer’s order.placed only',
      )
      assert.deepEqual(await deliveriesOf(storage, off.id), [], 'a disabled endpoint gets nothing')
      assert.deepEqual(await storage.webhookDeliveries.queueStats(), { pending: 4, oldestPendingAt: T0, undispatched: 0 })
      // Enabled again: what was written while it was disabled is not sent (a replay sends it), what comes after is.
      const update = { ...off, enabled: true, disabledReason: null, updatedAt: T0 + 1 }
      assert.ok(await storage.webhookEndpoints.updateEndpoint(off.id, T0, update, NOTHING_RECORDED))
      const [later] = await write(storage, petEvent(5))
      assert.deepEqual((await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims.map((c) => [c.endpoint.id, c.event.id]).sort(), [
        ['we_0000000000000001', later!.id],
        [off.id, later!.id],
      ])
    })

    test('each walk takes exactly the events endpointReceives gives its endpoint (the query holds the same rule)', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await withCustomer(storage)
      const endpoints = [
        endpoint('we_0000000000000001'),
        endpoint('we_0000000000000002', { events: ['order.placed', 'order.expired'] }),
        endpoint('we_0000000000000003', { customerId: ACME.customerId }),
        endpoint('we_0000000000000004', { customerId: ACME.customerId, events: ['pet.created'] }),
        endpoint('we_0000000000000005', { events: ['key.created'] }),
      ]
      for (const e of endpoints) await addEndpoint(storage, e)
      const types = ['pet.created', 'order.placed', 'order.expired', 'order.completed'] as const
      const drafts = Array.from({ length: 24 }, (_, n) => petEvent(n, n % 3 === 0 ? CHAIN : ACME, types[n % types.length]))
      await write(storage, ...drafts)
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 1000, LEASE)
      const logged = (await storage.events.list({ limit: 100 })).events.map((e) => ({
        seq: e.seq,
        id: e.id,
        type: e.type,
        customerId: e.customerId,
      }))
      for (const e of endpoints)
        assert.deepEqual(
          claims
            .filter((c) => c.endpoint.id === e.id)
            .map((c) => c.event.id)
            .sort(),
          fanOut(logged, [e], T0)
            .map((d) => d.event.id)
            .sort(),
          e.id,
        )
    })

    test("a pet's create is sent like any change: its event as the insert made it (on PostgreSQL, one statement)", async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const create = (name: string) => storage.pets.createPet({ name, categoryId: 1 }, petCreated(CHAIN, T0))
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      const rex = await create('Rex')
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
      assert.equal(claims.length, 1)
      const events = (await storage.events.list({ limit: 10 })).events
      assert.equal(claims[0]!.event.id, events.at(-1)?.id)
      assert.equal(claims[0]!.event.data, JSON.stringify(rex), 'the event is the pet as created, its id the one the insert gave')
    })

    test('concurrent claimers never claim the same delivery; a lease keeps it until it lapses, then any claims it, the lost attempt logged', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await write(storage, ...Array.from({ length: 24 }, (_, i) => petEvent(i)))
      // On PostgreSQL a claimer that finds the endpoint's cursor taken by another walks nothing that round.
      const rounds: Array<{ claims: DeliveryClaim[] }> = []
      for (let i = 0; i < 10 && rounds.flatMap((r) => r.claims).length < 24; i++)
        rounds.push(...(await Promise.all(Array.from({ length: 6 }, () => storage.webhookDeliveries.claimDue(T0, 5, LEASE)))))
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
      // The three failed ones are due again; a failing endpoint has one attempt at a time.
      const again = (await storage.webhookDeliveries.claimDue(T0 + 10 * DAY, 10, T0 + 11 * DAY)).claims
      assert.equal(again.length, 1)
      assert.equal(again[0]!.failing, true)
      assert.deepEqual((await storage.webhookDeliveries.claimDue(T0 + 10 * DAY, 10, T0 + 11 * DAY)).claims, [], 'not while it is leased')
      const before = await at(T0 + 4 + 5 * DAY, again[0]!, 500)
      assert.equal(before.disabled, undefined)
      assert.equal((await storage.webhookEndpoints.findEndpointById('we_0000000000000001'))!.enabled, true)
      const next = (await storage.webhookDeliveries.claimDue(T0 + 10 * DAY, 10, T0 + 11 * DAY)).claims
      assert.equal(next.length, 1, 'its outcome recorded, the next')
      const after = await at(T0 + 5 + 5 * DAY, next[0]!, 500)
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

    test('a 410 disables the endpoint (gone) with its event; its due deliveries are then failed unsent, its new events not walked', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      await addEndpoint(storage, endpoint('we_0000000000000001'))
      await write(storage, petEvent(1), petEvent(2))
      const { claims } = await storage.webhookDeliveries.claimDue(T0, 2, LEASE)
      await storage.webhookDeliveries.recordAttempt(outcome(claims[0]!, 500), disabledRecord)
      const gone = await storage.webhookDeliveries.recordAttempt(
        outcome(claims[1]!, 410, { next: { status: 'failed', nextAttemptAt: null }, effect: { kind: 'gone' } }),
        disabledRecord,
      )
      assert.equal(gone.disabled?.disabledReason, 'gone')
      assert.equal((await storage.events.list({ limit: 10, types: ['webhook_endpoint.disabled'] })).events.length, 1)
      await write(storage, petEvent(3))
      const next = await storage.webhookDeliveries.claimDue(T0 + 5_000, 10, LEASE + 5_000)
      assert.deepEqual(next, { claims: [], notSent: 1 }, 'the retry due is failed unsent; the new event is not walked')
      const statuses = (await deliveriesOf(storage, 'we_0000000000000001')).map((d) => [d.status, d.lastError])
      assert.deepEqual(statuses, [
        ['failed', 'the receiver answered 500'],
        ['failed', 'not sent: the endpoint is disabled (gone)'],
      ])
    })

    test('endpoints that never answer hold few slots: a failing one an attempt at a time, all of them at most the failing slots', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      for (let i = 10; i < 14; i++) await addEndpoint(storage, endpoint(`we_00000000000000${i}`))
      await write(storage, ...Array.from({ length: 5 }, (_, n) => petEvent(n)))
      // Each endpoint's first attempt fails: the four are failing, their deliveries due again at T0 + 5 s.
      const first = await storage.webhookDeliveries.claimDue(T0, 4, LEASE)
      for (const claim of first.claims) await storage.webhookDeliveries.recordAttempt(outcome(claim, 500), disabledRecord)
      await addEndpoint(storage, endpoint('we_0000000000000099'))
      await write(storage, ...Array.from({ length: 20 }, (_, n) => petEvent(100 + n)))
      const later = T0 + 5_000
      const { claims } = await storage.webhookDeliveries.claimDue(later, 10, later + 20_000, 2)
      const failing = claims.filter((c) => c.failing)
      assert.equal(failing.length, 2, 'two failing slots: two of the four failing endpoints, one attempt each')
      assert.equal(new Set(failing.map((c) => c.endpoint.id)).size, 2)
      assert.deepEqual(
        claims.filter((c) => !c.failing).map((c) => c.endpoint.id),
        Array.from({ length: 8 }, () => 'we_0000000000000099'),
        'the endpoint that answers takes the other slots',
      )
      const more = await storage.webhookDeliveries.claimDue(later, 10, later + 20_000, 10)
      assert.deepEqual(
        more.claims
          .filter((c) => c.failing)
          .map((c) => c.endpoint.id)
          .sort(),
        ['we_0000000000000010', 'we_0000000000000011', 'we_0000000000000012', 'we_0000000000000013'].filter(
          (id) => !failing.some((c) => c.endpoint.id === id),
        ),
        'the two failing endpoints without an attempt in flight, one each',
      )
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

describe('webhook walks on PostgreSQL, several writers and claimers', () => {
  test('a walk waits behind a writer that took a lower seq and commits later, and passes nothing; other transactions do not hold it', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `test_${randomBytes(6).toString('hex')}`
    const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
    const bystander = new pg.Client({ connectionString: PG_URL })
    t.after(async () => {
      await client.end().catch(() => {})
      await bystander.end().catch(() => {})
      await storage.close()
      await dropSchema(schema)
    })
    await addEndpoint(storage, endpoint('we_0000000000000001'))
    await client.connect()
    await bystander.connect()
    // A transaction with an xid that writes no event (elsewhere on the server) holds nothing back.
    await bystander.query('BEGIN')
    await bystander.query('SELECT pg_current_xact_id()')
    const [early] = await write(storage, petEvent(1))
    assert.deepEqual(
      (await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims.map((c) => c.event.id),
      [early!.id],
    )
    // A change in flight: its event has its seq, it has not committed.
    await client.query('BEGIN')
    const { rows } = await client.query(
      `INSERT INTO events (id, type, occurred_at, data, customer_id, key_chain_id, key_id)
         VALUES ('evt_slow', 'pet.created', ${T0}, '{"id":2}', NULL, 'key_a', 'key_a') RETURNING seq`,
    )
    const slowSeq = Number(rows[0].seq)
    const [fast] = await write(storage, petEvent(3))
    assert.deepEqual((await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims, [], 'the committed one waits behind the open writer')
    await client.query('COMMIT')
    const after = await storage.webhookDeliveries.claimDue(T0, 10, LEASE)
    assert.deepEqual(
      after.claims.map((c) => c.event.id),
      ['evt_slow', fast!.id],
      'both, in the order of their transactions',
    )
    assert.ok(slowSeq < (await deliveriesOf(storage, 'we_0000000000000001')).find((d) => d.eventId === fast!.id)!.eventSeq)
    await bystander.query('ROLLBACK')
  })

  test('a walk takes every event committed before it, whatever transactions begin and end around it meanwhile', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const engine = STORE_ENGINES.find((e) => e.name === 'PostgreSQL')!
    const storage = await engine.open(t)
    if (!storage) return
    await addEndpoint(storage, endpoint('we_0000000000000001'))
    // Elsewhere on the server, short transactions with an xid, back to back, a few at a time.
    let churning = true
    const churn = async () => {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      try {
        while (churning) await client.query('BEGIN; SELECT pg_current_xact_id(); SELECT pg_sleep(0.02); COMMIT')
      } finally {
        await client.end()
      }
    }
    const churners = Array.from({ length: 8 }, churn)
    try {
      for (let i = 0; i < 150; i++) {
        const [event] = await write(storage, petEvent(i))
        const claimed: string[] = (await storage.webhookDeliveries.claimDue(T0, 10, LEASE)).claims.map((c: DeliveryClaim) => c.event.id)
        assert.deepEqual(claimed, [event!.id], `round ${i}: the event committed before the claim`)
      }
    } finally {
      churning = false
      await Promise.all(churners)
    }
  })

  test('claimers at once make each first attempt once', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const engine = STORE_ENGINES.find((e) => e.name === 'PostgreSQL')!
    const storage = await engine.open(t)
    if (!storage) return
    await addEndpoint(storage, endpoint('we_0000000000000001'))
    await addEndpoint(storage, endpoint('we_0000000000000002'))
    for (let i = 0; i < 10; i++) await write(storage, ...Array.from({ length: 50 }, (_, j) => petEvent(i * 50 + j)))
    const claimed: string[] = []
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        // Bounded: a claimer that finds the cursors taken by the others gets nothing that round.
        for (let round = 0; round < 400 && claimed.length < 1000; round++) {
          const { claims } = await storage.webhookDeliveries.claimDue(T0, 25, LEASE)
          claimed.push(...claims.map((c) => `${c.endpoint.id} ${c.event.id}`))
        }
      }),
    )
    assert.equal(claimed.length, 1000)
    assert.equal(new Set(claimed).size, 1000, 'no attempt claimed twice')
    for (const id of ['we_0000000000000001', 'we_0000000000000002']) assert.equal((await deliveriesOf(storage, id)).length, 500)
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

test('migration 025 on SQLite: the events still in the outbox are walked by each endpoint, those fanned out keep their deliveries', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cursors-migration-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'store.db')
  const db = openMigrated(file, 'process')
  db.prepare(
    `INSERT INTO webhook_endpoints (id, url, description, events, customer_id, enabled, secret, previous_secret, previous_secret_expires_at,
       failing_since, disabled_reason, created_at, updated_at)
     VALUES ('we_0000000000000001', 'https://hooks.example.com/a', NULL, '["*"]', NULL, 1, 'whsec_a', NULL, NULL, NULL, NULL, ${T0}, ${T0})`,
  ).run()
  const insertEvent = db.prepare(
    `INSERT INTO events (id, type, occurred_at, data, customer_id, key_chain_id, key_id) VALUES (?, 'pet.created', ${T0}, '{"id":1}', NULL, 'key_a', 'key_a')`,
  )
  const seqs = ['evt_1', 'evt_2', 'evt_3'].map((id) => Number(insertEvent.run(id).lastInsertRowid))
  // The release before: no cursors, an outbox holding the two events not yet fanned out.
  db.exec(
    `DROP TABLE webhook_endpoint_cursors; DROP INDEX webhook_deliveries_leased; CREATE TABLE webhook_outbox (seq INTEGER PRIMARY KEY);
     INSERT INTO webhook_outbox (seq) VALUES (${seqs[1]}), (${seqs[2]});
     DELETE FROM schema_migrations WHERE version = '025_webhook_endpoint_cursors.sql'`,
  )
  db.close()
  const again = openMigrated(file, 'process')
  t.after(() => again.close())
  assert.deepEqual(again.prepare('SELECT endpoint_id, after_seq FROM webhook_endpoint_cursors').all(), [
    { endpoint_id: 'we_0000000000000001', after_seq: seqs[0] },
  ])
  assert.deepEqual(again.prepare("SELECT name FROM sqlite_master WHERE name = 'webhook_outbox'").all(), [], 'the outbox is gone')
})
