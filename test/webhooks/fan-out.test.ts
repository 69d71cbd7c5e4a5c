/**
 * Which endpoint receives which event (src/webhooks/fan-out.ts): an endpoint of a customer only
 * that customer's events, one without a customer every caller's; `["*"]` every type, a list only
 * its types; one delivery per event and endpoint that receives it, each with its own id, which sorts
 * by when it was made.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type LoggedEvent, WEBHOOK_DELIVERY_ID_PATTERN } from '../../src/webhooks/delivery.js'
import type { WebhookEndpointRecord } from '../../src/webhooks/endpoint.js'
import { endpointReceives, fanOut } from '../../src/webhooks/fan-out.js'

const endpoint = (id: string, fields: Partial<WebhookEndpointRecord>): WebhookEndpointRecord => ({
  id,
  url: 'https://hooks.example.com/',
  description: null,
  events: ['*'],
  customerId: null,
  enabled: true,
  secret: 'whsec_x',
  previousSecret: null,
  previousSecretExpiresAt: null,
  failingSince: null,
  disabledReason: null,
  createdAt: 0,
  updatedAt: 0,
  ...fields,
})
const event = (seq: number, type: LoggedEvent['type'], customerId: string | null): LoggedEvent => ({
  seq,
  id: `evt_${seq}`,
  type,
  customerId,
})

test('a customer’s endpoint receives only that customer’s events; one without a customer, every event', () => {
  const acme = endpoint('we_acme', { customerId: 'cus_acme' })
  const all = endpoint('we_all', {})
  assert.equal(endpointReceives(acme, event(1, 'order.placed', 'cus_acme')), true)
  assert.equal(endpointReceives(acme, event(2, 'order.placed', 'cus_other')), false)
  assert.equal(endpointReceives(acme, event(3, 'order.placed', null)), false, 'a key chain’s event is no customer’s')
  for (const customer of ['cus_acme', 'cus_other', null]) assert.equal(endpointReceives(all, event(4, 'key.created', customer)), true)
})

test('["*"] receives every type; a list only its types', () => {
  const orders = endpoint('we_orders', { events: ['order.placed', 'order.expired'] })
  assert.equal(endpointReceives(orders, event(1, 'order.placed', null)), true)
  assert.equal(endpointReceives(orders, event(2, 'order.expired', null)), true)
  assert.equal(endpointReceives(orders, event(3, 'order.completed', null)), false)
  assert.equal(endpointReceives(endpoint('we_any', { events: ['*'] }), event(4, 'webhook_endpoint.disabled', null)), true)
})

test('one delivery per event and endpoint that receives it, in event order, each its own dlv_ id', () => {
  const endpoints = [endpoint('we_acme', { customerId: 'cus_acme' }), endpoint('we_orders', { events: ['order.placed'] })]
  const events = [event(1, 'order.placed', 'cus_acme'), event(2, 'pet.created', null), event(3, 'order.placed', 'cus_b')]
  const deliveries = fanOut(events, endpoints, Date.UTC(2026, 10, 29))
  assert.deepEqual(
    deliveries.map((d) => [d.event.seq, d.endpointId]),
    [
      [1, 'we_acme'],
      [1, 'we_orders'],
      [3, 'we_orders'],
    ],
  )
  for (const d of deliveries) assert.match(d.id, new RegExp(WEBHOOK_DELIVERY_ID_PATTERN))
  for (const d of deliveries) assert.match(d.id, /^dlv_[0-9A-Za-z]{24}$/)
  assert.equal(new Set(deliveries.map((d) => d.id)).size, deliveries.length)
})

test('delivery ids sort by when they were made, so a fan-out writes them at the end of the id index', () => {
  const endpoints = Array.from({ length: 20 }, (_, i) => endpoint(`we_${i}`, {}))
  const at = (now: number) => fanOut([event(1, 'pet.created', null)], endpoints, now).map((d) => d.id)
  const earlier = at(Date.UTC(2026, 10, 29, 12))
  const later = at(Date.UTC(2026, 10, 29, 12) + 1)
  const latest = at(Date.UTC(2030, 0, 1))
  assert.ok(
    earlier.every((a) => later.every((b) => a < b)),
    'a millisecond later sorts after',
  )
  assert.ok(
    later.every((a) => latest.every((b) => a < b)),
    'years later sorts after',
  )
})

test('the delivery id pattern still takes the ids made before they sorted by time', () => {
  const pattern = new RegExp(WEBHOOK_DELIVERY_ID_PATTERN)
  assert.match('dlv_0123456789ABCDEF', pattern)
  assert.match('dlv_0123456789ABCDEFabcdefgh', pattern)
  for (const bad of ['dlv_0123456789ABCDE', 'dlv_0123456789ABCDEFabc', 'dlv_0123456789ABCDEFabcdefghi', 'dlv_0123456789ABCDE-'])
    assert.doesNotMatch(bad, pattern)
})
