/**
 * An endpoint's secret is what a receiver hands, as it is, to the standardwebhooks package
 * (Standard Webhooks: `whsec_` + base64 of at least 24 random bytes), and during a rotation both
 * secrets sign: a receiver with either one verifies the delivery.
 */
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { newWebhookSecret, signingSecrets } from '../../src/webhooks/secret.js'

test('a new secret is whsec_ and the base64 of 32 random bytes, each different', () => {
  const secrets = Array.from({ length: 50 }, newWebhookSecret)
  for (const secret of secrets) {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 32)
  }
  assert.equal(new Set(secrets).size, secrets.length)
})

test('the standardwebhooks package takes the secret as it is, and verifies what it signs', () => {
  const secret = newWebhookSecret()
  const receiver = new Webhook(secret)
  const id = 'evt_0123456789abcdefghijklmn'
  const at = new Date()
  const body = JSON.stringify({ type: 'order.placed', timestamp: at.toISOString(), data: { id: 7 } })
  // The signature as the spec writes it: v1, the base64 HMAC-SHA256 of id.timestamp.body under the decoded secret.
  const seconds = Math.floor(at.getTime() / 1000)
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const signature = `v1,${createHmac('sha256', key).update(`${id}.${seconds}.${body}`).digest('base64')}`
  assert.equal(receiver.sign(id, at, body), signature)
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': signature }
  assert.deepEqual(receiver.verify(body, headers), JSON.parse(body))
})

test('during a rotation both secrets sign until the previous one expires: a receiver with either verifies', () => {
  const previous = newWebhookSecret()
  const current = newWebhookSecret()
  const endpoint = { secret: current, previousSecret: previous, previousSecretExpiresAt: 2_000_000 }
  assert.deepEqual(signingSecrets(endpoint, 1_999_999), [current, previous])
  assert.deepEqual(signingSecrets(endpoint, 2_000_000), [current], 'expired at its time')
  assert.deepEqual(signingSecrets({ secret: current, previousSecret: null, previousSecretExpiresAt: null }, 0), [current])

  const id = 'evt_rotation'
  const at = new Date()
  const body = '{"type":"key.rotated","timestamp":"2026-11-21T12:00:00.000Z","data":{}}'
  // The header carries one signature per live secret, space-separated.
  const header = signingSecrets(endpoint, 1_000_000)
    .map((s) => new Webhook(s).sign(id, at, body))
    .join(' ')
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': header }
  for (const receiverSecret of [previous, current]) assert.ok(new Webhook(receiverSecret).verify(body, headers))
  assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers), /No matching signature/)
})
