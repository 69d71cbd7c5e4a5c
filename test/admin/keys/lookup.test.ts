/**
 * POST /admin/v1/keys/lookup (src/admin/keys/lookup.ts): which key is this secret, or this prefix?
 * Through app.inject: a key found in every state, 404, a prefix's page, the body's one-of rule,
 * the audit entry of a lookup, and the secret in no log line, answer or audit entry.
 */
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { pino } from 'pino'
import { displayPrefix } from '../../../src/shared/key-redaction.js'
import { type AdminTestApp, buildAdminTestApp } from '../helpers.js'

const create = async (t: AdminTestApp, name: string, body: Record<string, unknown> = {}) => {
  const res = await t.call('POST', '/admin/v1/keys', { plan: 'free', name, ...body })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as { key: string; apiKey: { id: string; prefix: string } }
}
const lookup = (t: AdminTestApp, body: unknown) => t.call('POST', '/admin/v1/keys/lookup', body)

test('a whole key finds its key in every state: active, rotated away from, revoked, expired', async (t) => {
  const app = await buildAdminTestApp(t)
  const active = await create(app, 'active')
  const rotated = await create(app, 'rotated')
  const successor = (await app.call('POST', `/admin/v1/keys/${rotated.apiKey.id}/rotate`, { gracePeriodSeconds: 0 })).json()
  const revoked = await create(app, 'revoked')
  await app.call('POST', `/admin/v1/keys/${revoked.apiKey.id}/revoke`)
  const expiring = await create(app, 'expiring', { expiresAt: new Date(app.clock.now() + 60_000).toISOString() })
  app.clock.advance(120_000)

  const cases: [string, string, string, string | null][] = [
    [active.key, active.apiKey.id, 'active', null],
    [rotated.key, rotated.apiKey.id, 'revoked', successor.apiKey.id],
    [successor.key, successor.apiKey.id, 'active', null],
    [revoked.key, revoked.apiKey.id, 'revoked', null],
    [expiring.key, expiring.apiKey.id, 'expired', null],
  ]
  for (const [key, id, state, rotatedTo] of cases) {
    const res = await lookup(app, { key })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([res.json().id, res.json().state, res.json().rotatedTo], [id, state, rotatedTo])
    assert.equal(res.json().prefix, displayPrefix(key))
  }
})

test('an unknown secret is 404 not_found, and its answer does not quote it', async (t) => {
  const app = await buildAdminTestApp(t)
  const { key } = await create(app, 'real')
  const other = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')
  for (const secret of [other, 'not a key at all']) {
    const res = await lookup(app, { key: secret })
    assert.equal(res.statusCode, 404, res.body)
    assert.equal(res.json().code, 'not_found')
    assert.ok(!res.body.includes(secret.slice(8)), res.body)
  }
})

test('a prefix answers the page of keys with that display prefix, and more of a key is matched on its display prefix', async (t) => {
  const app = await buildAdminTestApp(t)
  const a = await create(app, 'a')
  await create(app, 'b')
  for (const prefix of [a.apiKey.prefix, a.key.slice(0, 20)]) {
    const res = await lookup(app, { prefix })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(
      res.json().data.map((k: { id: string }) => k.id),
      [a.apiKey.id],
    )
    assert.equal(res.json().nextAfter, null)
  }
  const none = await lookup(app, { prefix: 'as_test_zzzz' })
  assert.deepEqual(none.json(), { data: [], nextAfter: null })
})

test('the body is exactly one of key and prefix: both, neither, another field, a bad prefix or paging a key are 400 naming the field', async (t) => {
  const app = await buildAdminTestApp(t)
  const { key } = await create(app, 'x')
  const cases: [unknown, string][] = [
    [{}, 'key'],
    [{ key, prefix: 'as_live_AbCd' }, 'prefix'],
    [{ prefix: 'as_live_Ab' }, 'prefix'],
    [{ key, limit: 5 }, 'limit'],
    [{ id: 'key_x' }, 'id'],
  ]
  for (const [body, field] of cases) {
    const res = await lookup(app, body)
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().code, 'invalid_request')
    assert.match(res.json().message, new RegExp(field), res.body)
    assert.ok(!res.body.includes(key.slice(8)), 'no refusal quotes the secret')
  }
})

test('a lookup is audited as a read (key.lookup) naming the key found, never the secret; it is in no log line', async (t) => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const app = await buildAdminTestApp(t, { logger: pino({ level: 'trace' }, sink) })
  const { key, apiKey } = await create(app, 'leaked')
  assert.equal((await lookup(app, { key })).statusCode, 200)
  assert.equal((await lookup(app, { key: key.slice(0, -2) })).statusCode, 404)
  assert.equal((await lookup(app, { key, prefix: 'as_live_AbCd' })).statusCode, 400)
  // Not JSON (the key pasted unquoted, cut short): the parser's message quotes none of it.
  for (const body of [`{"key": ${key}}`, `{"key": "${key}`, `{"key": "${key}" x}`]) {
    const res = await lookup(app, body)
    assert.equal(res.statusCode, 400, res.body)
    assert.ok(!res.body.includes(key.slice(12, 22)), res.body)
  }

  const audit = (await app.call('GET', '/admin/v1/audit-log?action=key.lookup&kind=read')).json()
  assert.equal(audit.data.length, 1)
  assert.deepEqual([audit.data[0].keyId, audit.data[0].details], [apiKey.id, {}])
  assert.ok(lines.length > 0, 'the access lines were captured')
  const secret = key.slice(displayPrefix(key).length)
  for (const line of lines) assert.ok(!line.includes(secret.slice(0, 10)), line)
  assert.ok(!JSON.stringify(audit).includes(secret.slice(0, 10)))
})
