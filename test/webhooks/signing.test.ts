/**
 * A delivery's request as Standard Webhooks has it (src/webhooks/signing.ts), checked by the
 * standardwebhooks package as a receiver uses it, never by the service's own code: the body is
 * `{"type","timestamp","data"}` with `data` as it was written (an int64 above 2^53 exact), the
 * headers verify with the endpoint's secret, `webhook-id` is the event's id, and during a rotation
 * both secrets sign until the previous one's end.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { newWebhookSecret } from '../../src/webhooks/secret.js'
import { webhookBody, webhookHeaders } from '../../src/webhooks/signing.js'

const DATA = '{"id":7,"name":"Rex","categoryId":9007199254740993,"status":"available"}'
const event = { id: 'evt_3d5QmJ0aP7Kx2LrV', type: 'pet.created' as const, occurredAt: Date.UTC(2026, 10, 29, 7, 30), data: DATA }
const endpoint = (secret: string, previousSecret: string | null = null, previousSecretExpiresAt: number | null = null) => ({
  id: 'we_0000000000000001',
  url: 'https://hooks.example.com/',
  secret,
  previousSecret,
  previousSecretExpiresAt,
})

test('the body is type, timestamp and the data as written: an int64 above 2^53 arrives exact', () => {
  const body = webhookBody(event)
  assert.equal(body, `{"type":"pet.created","timestamp":"2026-11-29T07:30:00.000Z","data":${DATA}}`)
  // What JSON.parse would have made of it: 9007199254740992. The text carries the exact digits.
  assert.ok(body.includes('9007199254740993'))
  assert.equal(JSON.stringify(JSON.parse(body)).includes('9007199254740993'), false, 'a parse and stringify would not have kept it')
})

test('the headers verify with the endpoint’s secret; webhook-id is the event’s id; webhook-timestamp is the attempt’s time', () => {
  const secret = newWebhookSecret()
  const now = Date.now()
  const body = webhookBody(event)
  const headers = webhookHeaders({ endpoint: endpoint(secret), event }, body, now)
  assert.equal(headers['content-type'], 'application/json')
  assert.equal(headers['webhook-id'], event.id)
  assert.equal(headers['webhook-timestamp'], String(Math.floor(now / 1000)))
  assert.match(headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/)
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body))
  assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers), /No matching signature/)
  assert.throws(() => new Webhook(secret).verify(body.replace('Rex', 'Max'), headers), /No matching signature/)
  // Another attempt later: the same id, its own timestamp, still verified.
  const later = webhookHeaders({ endpoint: endpoint(secret), event }, body, now + 60_000)
  assert.equal(later['webhook-id'], event.id)
  assert.notEqual(later['webhook-timestamp'], headers['webhook-timestamp'])
  assert.ok(new Webhook(secret).verify(body, later))
})

test('during a rotation both secrets sign, space-separated; after the previous one’s end only the new one', () => {
  const [current, previous] = [newWebhookSecret(), newWebhookSecret()]
  const now = Date.now()
  const body = webhookBody(event)
  const during = webhookHeaders({ endpoint: endpoint(current, previous, now + 3_600_000), event }, body, now)
  assert.equal(during['webhook-signature']!.split(' ').length, 2)
  assert.ok(new Webhook(current).verify(body, during), 'the new secret verifies')
  assert.ok(new Webhook(previous).verify(body, during), 'and so does the previous one')
  const after = webhookHeaders({ endpoint: endpoint(current, previous, now - 1), event }, body, now)
  assert.equal(after['webhook-signature']!.split(' ').length, 1)
  assert.ok(new Webhook(current).verify(body, after))
  assert.throws(() => new Webhook(previous).verify(body, after), /No matching signature/)
})
