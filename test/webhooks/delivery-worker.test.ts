/**
 * The delivery worker (src/webhooks/delivery-worker.ts), its claims walking the log, over an
 * in-memory store, a loopback receiver and a virtual clock (set to now, which the standardwebhooks
 * package's timestamp check needs): every delivery verified by that package; a 410 disables the
 * endpoint; failing for longer than WEBHOOK_DISABLE_AFTER disables it and records
 * `webhook_endpoint.disabled` and an audit entry, after which its deliveries are not sent; an
 * endpoint of a customer receives that customer's events only; no more attempts at once than the
 * concurrency; endpoints that never answer hold half the slots at most; a stop interrupts what is
 * in flight, which is due again at once.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { ChangeRecorder } from '../../src/changes/change-recorder.js'
import { type EventOwner, eventDraft } from '../../src/events/event.js'
import { ManualClock } from '../../src/shared/clock.js'
import type { Storage } from '../../src/storage/storage.js'
import { type DeliveryOutcomeLabel, DeliveryWorker } from '../../src/webhooks/delivery-worker.js'
import type { WebhookEndpointRecord } from '../../src/webhooks/endpoint.js'
import { newWebhookSecret } from '../../src/webhooks/secret.js'
import { INTERRUPTED, sendWebhook } from '../../src/webhooks/sender.js'
import { memoryStorage } from '../helpers/app.js'

const DAY = 86_400_000
const CHAIN: EventOwner = { customerId: null, keyChainId: 'key_a', keyId: 'key_a' }
const ACME: EventOwner = { customerId: 'cus_0000000000000001', keyChainId: null, keyId: 'key_b' }

interface Hit {
  headers: Record<string, string>
  body: string
}

/** A receiver on loopback answering each request with `answer(n)` (n from 1), after `delayMs`. */
async function receiver(t: import('node:test').TestContext, answer: (n: number, hit: Hit) => number | 'hang', delayMs = 0) {
  const hits: Hit[] = []
  let inFlight = 0
  let maxInFlight = 0
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    res.on('close', () => inFlight--)
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const hit = { headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() }
      hits.push(hit)
      const status = answer(hits.length, hit)
      if (status === 'hang') return
      setTimeout(() => res.writeHead(status).end(), delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits, maxInFlight: () => maxInFlight }
}

function rig(t: import('node:test').TestContext, options: { concurrency?: number; scheduleMs?: number[]; timeoutMs?: number } = {}) {
  const clock = new ManualClock(Date.now())
  const storage: Storage = memoryStorage(clock)
  t.after(() => storage.close())
  const outcomes: DeliveryOutcomeLabel[] = []
  const timeoutMs = options.timeoutMs ?? 2_000
  const worker = new DeliveryWorker(storage.webhookDeliveries, {
    clock,
    concurrency: options.concurrency ?? 10,
    timeoutMs,
    rules: { scheduleMs: options.scheduleMs ?? [5_000, 300_000], disableAfterMs: 5 * DAY },
    send: (url, headers, body, signal) =>
      sendWebhook(url, headers, body, { timeoutMs, allowPrivateNetworks: true, resolve: async () => [] }, signal),
    recorder: new ChangeRecorder(storage.audit, clock),
    onOutcome: (o) => outcomes.push(o),
  })
  const addEndpoint = async (url: string, fields: Partial<WebhookEndpointRecord> = {}) => {
    const endpoint: WebhookEndpointRecord = {
      id: `we_${String(Math.floor(Math.random() * 1e16)).padStart(16, '0')}`,
      url,
      description: null,
      events: ['*'],
      customerId: null,
      enabled: true,
      secret: newWebhookSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      failingSince: null,
      disabledReason: null,
      createdAt: clock.now(),
      updatedAt: clock.now(),
      ...fields,
    }
    await storage.webhookEndpoints.insertEndpoint(endpoint, { audit: [] })
    return endpoint
  }
  const emit = async (n: number, owner = CHAIN, type: 'pet.created' | 'order.placed' = 'pet.created') => {
    const event = eventDraft(type, owner, clock.now(), { id: n })
    await storage.audit.write({ audit: [], events: [event] })
    return event
  }
  /** Makes every attempt due now: the first attempts of what was written, and the retries due. */
  const deliver = () => worker.settle()
  return { clock, storage, worker, outcomes, addEndpoint, emit, deliver }
}

test('each attempt is signed as Standard Webhooks has it, verified by the standardwebhooks package', async (t) => {
  const r = rig(t)
  const hook = await receiver(t, () => 204)
  const endpoint = await r.addEndpoint(hook.url)
  const event = await r.emit(1)
  await r.deliver()
  assert.equal(hook.hits.length, 1)
  const [hit] = hook.hits
  assert.deepEqual(new Webhook(endpoint.secret).verify(hit!.body, hit!.headers), {
    type: 'pet.created',
    timestamp: new Date(event.occurredAt).toISOString(),
    data: { id: 1 },
  })
  assert.equal(hit!.headers['webhook-id'], event.id)
  assert.deepEqual(r.outcomes, ['delivered'])
})

test('a 410 gives the delivery up and disables the endpoint (gone), with its event; nothing more is sent to it', async (t) => {
  const r = rig(t)
  const hook = await receiver(t, () => 410)
  const endpoint = await r.addEndpoint(hook.url)
  await r.emit(1)
  await r.deliver()
  const disabled = await r.storage.webhookEndpoints.findEndpointById(endpoint.id)
  assert.deepEqual([disabled!.enabled, disabled!.disabledReason], [false, 'gone'])
  assert.ok(disabled!.updatedAt > endpoint.updatedAt)
  const [event] = (await r.storage.events.list({ limit: 10, types: ['webhook_endpoint.disabled'] })).events
  const data = JSON.parse(event!.data)
  assert.deepEqual([data.id, data.enabled, data.disabledReason, data.secret], [endpoint.id, false, 'gone', undefined])
  assert.ok(!event!.data.includes(endpoint.secret.slice(6)), 'never the secret')
  await r.emit(2)
  await r.deliver()
  assert.equal(hook.hits.length, 1, 'a disabled endpoint is sent nothing')
  assert.deepEqual(r.outcomes, ['gone'])
})

test('failing for longer than WEBHOOK_DISABLE_AFTER disables the endpoint (failing), records the event and an audit entry', async (t) => {
  const r = rig(t, { scheduleMs: [60_000, 60_000, 60_000] })
  const hook = await receiver(t, () => 500)
  const endpoint = await r.addEndpoint(hook.url)
  const started = r.clock.now()
  await r.emit(1)
  await r.deliver()
  assert.equal((await r.storage.webhookEndpoints.findEndpointById(endpoint.id))!.failingSince, started)
  // Four days on: another event fails too, the endpoint still enabled.
  r.clock.advance(4 * DAY)
  await r.emit(2)
  await r.deliver()
  assert.equal((await r.storage.webhookEndpoints.findEndpointById(endpoint.id))!.enabled, true)
  // Past five days of failing: the next failed attempt disables it.
  r.clock.advance(DAY + 1)
  await r.emit(3)
  await r.deliver()
  const disabled = await r.storage.webhookEndpoints.findEndpointById(endpoint.id)
  assert.deepEqual([disabled!.enabled, disabled!.disabledReason, disabled!.failingSince], [false, 'failing', started])
  const events = (await r.storage.events.list({ limit: 10, types: ['webhook_endpoint.disabled'] })).events
  assert.equal(events.length, 1)
  assert.equal(JSON.parse(events[0]!.data).disabledReason, 'failing')
  const audit = (await r.storage.audit.list({ limit: 10 })).entries
  assert.deepEqual(
    audit.map((e) => [e.actor, e.action, e.details.enabled, e.details.disabledReason, e.details.changed]),
    [[{ type: 'system', id: 'webhook-delivery' }, 'webhook_endpoint.update', false, 'failing', ['enabled']]],
  )
  // What was still pending for it is given up unsent when due; an event it was not sent yet gets no delivery (a replay sends it).
  const sent = hook.hits.length
  r.clock.advance(70_000)
  await r.deliver()
  assert.equal(hook.hits.length, sent)
  const deliveries = await r.storage.webhookDeliveries.pageDeliveries({ endpointId: endpoint.id, limit: 10 })
  assert.equal(deliveries.length, 2, 'an attempt at a time: the first to fail disabled it, the third event was never taken')
  assert.equal(r.outcomes.filter((o) => o === 'not_sent').length, 2, 'the two pending deliveries')
  assert.deepEqual(
    deliveries.map((d) => d.status),
    ['failed', 'failed'],
  )
})

test('an endpoint of a customer receives only that customer’s events', async (t) => {
  const r = rig(t)
  await r.storage.customers.insertCustomer(
    { id: ACME.customerId!, name: 'Acme', plan: 'pro', perMinute: 300, perDay: 10_000, metadata: null, createdAt: 0, updatedAt: 0 },
    { audit: [] },
  )
  const acmeHook = await receiver(t, () => 204)
  const allHook = await receiver(t, () => 204)
  await r.addEndpoint(acmeHook.url, { customerId: ACME.customerId })
  await r.addEndpoint(allHook.url)
  const mine = await r.emit(1, ACME, 'order.placed')
  const theirs = await r.emit(2, CHAIN, 'order.placed')
  const other = await r.emit(3, { customerId: 'cus_0000000000000002', keyChainId: null, keyId: null }, 'order.placed')
  await r.deliver()
  assert.deepEqual(
    acmeHook.hits.map((h) => h.headers['webhook-id']),
    [mine.id],
  )
  assert.deepEqual(allHook.hits.map((h) => h.headers['webhook-id']).sort(), [mine.id, theirs.id, other.id].sort())
})

test('no more attempts at once than the concurrency', async (t) => {
  const r = rig(t, { concurrency: 3 })
  const hook = await receiver(t, () => 204, 100)
  await r.addEndpoint(hook.url)
  for (let i = 0; i < 12; i++) await r.emit(i)
  await r.deliver()
  assert.equal(hook.hits.length, 12)
  assert.equal(hook.maxInFlight(), 3)
})

test('endpoints that never answer hold half the slots at most, an attempt each: an endpoint that answers keeps the rest', async (t) => {
  const r = rig(t, { concurrency: 4, timeoutMs: 30_000 })
  const dead = await receiver(t, () => 'hang')
  const live = await receiver(t, () => 204)
  // Four endpoints already failing (their receiver stopped answering), and one that answers.
  for (let i = 0; i < 4; i++) await r.addEndpoint(`${dead.url}?${i}`, { failingSince: r.clock.now() })
  await r.addEndpoint(live.url)
  for (let i = 0; i < 6; i++) await r.emit(i)
  r.worker.start()
  t.after(() => r.worker.stop())
  const deadline = Date.now() + 10_000
  while (live.hits.length < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.equal(live.hits.length, 6, 'every event reached the endpoint that answers, while the others hang')
  assert.equal(dead.maxInFlight(), 2, 'half of the four slots, one attempt per failing endpoint')
})

test('a stop interrupts the attempts in flight; each is logged and due again at once', async (t) => {
  const r = rig(t, { timeoutMs: 30_000 })
  const hook = await receiver(t, () => 'hang')
  const endpoint = await r.addEndpoint(hook.url)
  await r.emit(1)
  r.worker.start()
  const deadline = Date.now() + 5_000
  while (hook.hits.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  const started = performance.now()
  await r.worker.stop()
  assert.ok(performance.now() - started < 2_000, 'the stop did not wait for the receiver')
  const [delivery] = await r.storage.webhookDeliveries.pageDeliveries({ endpointId: endpoint.id, limit: 10 })
  assert.deepEqual([delivery!.status, delivery!.nextAttemptAt, delivery!.lastError], ['pending', r.clock.now(), INTERRUPTED])
  assert.deepEqual(r.outcomes, ['interrupted'])
  assert.equal((await r.storage.webhookEndpoints.findEndpointById(endpoint.id))!.failingSince, null, 'not the receiver’s failure')
})
