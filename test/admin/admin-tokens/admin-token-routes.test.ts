/** /admin/v1/admin-tokens through app.inject: list, create (the secret once), revoke (at once, and on another instance), roles, audit. */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { createAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js'
import { buildAdminTestApp } from '../helpers.js'

const as = (app: FastifyInstance, token: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
  app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })

test('an admin token creates a read token: 201, the secret once, never in a log line or the audit log; it works at once', async (t) => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const app = await buildAdminTestApp(t, { logger: pino({ level: 'trace' }, sink) })
  const res = await app.call('POST', '/admin/v1/admin-tokens', { name: 'auditor', role: 'read' })
  assert.equal(res.statusCode, 201, res.body)
  const { token, adminToken } = res.json()
  assert.match(token, /^as_admin_[0-9A-Za-z]{38}$/)
  assert.match(adminToken.id, /^adm_[0-9A-Za-z]{16}$/)
  assert.deepEqual(
    { name: adminToken.name, role: adminToken.role, prefix: adminToken.prefix, revokedAt: adminToken.revokedAt },
    { name: 'auditor', role: 'read', prefix: token.slice(0, 13), revokedAt: null },
  )

  const me = await as(app.app, token, 'GET', '/admin/v1/token')
  assert.equal(me.statusCode, 200, me.body)
  assert.deepEqual([me.json().id, me.json().role], [adminToken.id, 'read'])

  const list = await app.call('GET', '/admin/v1/admin-tokens')
  assert.equal(list.statusCode, 200, list.body)
  assert.deepEqual(
    list
      .json()
      .data.map((x: { name: string }) => x.name)
      .sort(),
    ['auditor', 'test token'],
  )
  const audit = (await app.call('GET', '/admin/v1/audit-log?action=admin_token.create')).json()
  assert.equal(audit.data.length, 1)
  const [entry] = audit.data
  assert.deepEqual(entry.actor, { type: 'admin_token', id: app.tokenId, name: 'test token' })
  assert.equal(entry.keyId, null)
  assert.deepEqual(entry.details, { tokenId: adminToken.id, name: 'auditor', prefix: adminToken.prefix, role: 'read' })
  assert.equal(typeof entry.requestId, 'string')

  const secret = token.slice(13)
  assert.ok(lines.length > 0, 'the log lines were captured')
  for (const line of lines) assert.ok(!line.includes(secret.slice(0, 10)), line)
  assert.ok(!JSON.stringify(audit).includes(secret.slice(0, 10)))
  assert.ok(!list.body.includes(secret.slice(0, 10)))
})

test('a read token may list admin tokens but not create or revoke one (403 forbidden_role)', async (t) => {
  const app = await buildAdminTestApp(t)
  const reader = await createAdminToken(app.storage.adminTokens, { name: 'reader', role: 'read' })
  assert.equal((await as(app.app, reader.token, 'GET', '/admin/v1/admin-tokens')).statusCode, 200)
  const create = await as(app.app, reader.token, 'POST', '/admin/v1/admin-tokens', { name: 'x', role: 'admin' })
  assert.deepEqual([create.statusCode, create.json().code], [403, 'forbidden_role'])
  const revoke = await as(app.app, reader.token, 'POST', `/admin/v1/admin-tokens/${app.tokenId}/revoke`)
  assert.deepEqual([revoke.statusCode, revoke.json().code], [403, 'forbidden_role'])
  assert.equal((await app.storage.adminTokens.list()).length, 2)
  assert.equal((await app.call('GET', '/admin/v1/audit-log?action=admin_token.revoke')).json().data.length, 0)
})

test('bad input: 400 naming the field; an unknown role, a hidden character, a bad id', async (t) => {
  const app = await buildAdminTestApp(t)
  for (const body of [{ name: 'x' }, { name: 'x', role: 'owner' }, { name: '', role: 'read' }, { name: 'x', role: 'read', extra: 1 }]) {
    const res = await app.call('POST', '/admin/v1/admin-tokens', body)
    assert.equal(res.statusCode, 400, JSON.stringify(body) + res.body)
  }
  const hidden = await app.call('POST', '/admin/v1/admin-tokens', { name: 'a\u202eb', role: 'read' })
  assert.equal(hidden.statusCode, 400, hidden.body)
  assert.match(hidden.json().message, /^name /)
  assert.equal((await app.call('POST', '/admin/v1/admin-tokens/x/revoke')).statusCode, 400)
  assert.equal((await app.call('POST', '/admin/v1/admin-tokens/adm_0000000000000000/revoke')).statusCode, 404)
  assert.equal((await app.call('POST', `/admin/v1/admin-tokens/${app.tokenId}/revoke`, { why: 1 })).statusCode, 400)
  assert.equal((await app.call('GET', '/admin/v1/admin-tokens?after=adm_0000000000000000')).statusCode, 400)
})

test('revoke: 200, the token is refused at once (401), a repeat is idempotent, both audited; a token cannot revoke itself (409)', async (t) => {
  const app = await buildAdminTestApp(t)
  const { token, adminToken } = (await app.call('POST', '/admin/v1/admin-tokens', { name: 'colleague', role: 'admin' })).json()
  assert.equal((await as(app.app, token, 'GET', '/admin/v1/keys')).statusCode, 200, 'cached by its first request')

  const self = await as(app.app, token, 'POST', `/admin/v1/admin-tokens/${adminToken.id}/revoke`)
  assert.deepEqual([self.statusCode, self.json().code], [409, 'conflict'])
  assert.match(self.json().message, /cannot revoke itself/)

  const res = await app.call('POST', `/admin/v1/admin-tokens/${adminToken.id}/revoke`)
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().alreadyRevoked, false)
  assert.match(res.json().adminToken.revokedAt, /^\d{4}-/)
  assert.equal((await as(app.app, token, 'GET', '/admin/v1/keys')).statusCode, 401, 'refused at the next request')

  const again = await app.call('POST', `/admin/v1/admin-tokens/${adminToken.id}/revoke`, {})
  assert.deepEqual(
    [again.statusCode, again.json().alreadyRevoked, again.json().adminToken.revokedAt],
    [200, true, res.json().adminToken.revokedAt],
  )
  const audit = (await app.call('GET', '/admin/v1/audit-log?action=admin_token.revoke')).json().data
  const repeat = (e: { details: { alreadyRevoked?: boolean } }) => Number(e.details.alreadyRevoked === true)
  audit.sort((a: { details: { alreadyRevoked?: boolean } }, b: { details: { alreadyRevoked?: boolean } }) => repeat(a) - repeat(b))
  assert.deepEqual(
    audit.map((e: { details: unknown; keyId: unknown }) => [e.keyId, e.details]),
    [
      [null, { tokenId: adminToken.id, name: 'colleague', prefix: adminToken.prefix }],
      [null, { tokenId: adminToken.id, name: 'colleague', prefix: adminToken.prefix, alreadyRevoked: true }],
    ],
  )
  const listed = (await app.call('GET', '/admin/v1/admin-tokens')).json().data.find((x: { id: string }) => x.id === adminToken.id)
  assert.equal(listed.revokedAt, res.json().adminToken.revokedAt)
})

test('the list is newest first and paged with limit/after and Link', async (t) => {
  const app = await buildAdminTestApp(t)
  for (let i = 0; i < 4; i++) {
    app.clock.advance(1000)
    await app.call('POST', '/admin/v1/admin-tokens', { name: `t${i}`, role: 'read' })
  }
  // The suite's own token was made at the real time, these at the test clock's: compare them among themselves.
  const names: string[] = []
  let url: string | undefined = '/admin/v1/admin-tokens?limit=2'
  let pages = 0
  while (url !== undefined) {
    const page = await app.call('GET', url)
    assert.equal(page.statusCode, 200, page.body)
    names.push(...page.json().data.map((x: { name: string }) => x.name))
    const next = page.headers.link as string | undefined
    assert.equal(next === undefined, page.json().nextAfter === null)
    url = next?.slice(1, next.indexOf('>'))
    pages++
  }
  assert.equal(pages, 3)
  assert.deepEqual(
    names.filter((n) => n !== 'test token'),
    ['t3', 't2', 't1', 't0'],
  )
  assert.equal(names.length, 5)
})

test('a token revoked through one instance is refused by another on the same SQLite file at its next read of the change log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'as-admin-tokens-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'store.db')
  const env = { KEY_REFRESH_MS: '50' }
  const here = await buildAdminTestApp(t, { env, storage: new SqliteStorage({ databaseUrl: file, durability: 'process' }) })
  const there = await buildAdminTestApp(t, { env, storage: new SqliteStorage({ databaseUrl: file, durability: 'process' }) })
  const { token, adminToken } = (await here.call('POST', '/admin/v1/admin-tokens', { name: 'roaming', role: 'read' })).json()
  assert.equal((await as(there.app, token, 'GET', '/admin/v1/token')).statusCode, 200, 'works there at once, then cached')
  assert.equal((await here.call('POST', `/admin/v1/admin-tokens/${adminToken.id}/revoke`)).statusCode, 200)
  let status = 200
  for (let i = 0; i < 100 && status === 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    status = (await as(there.app, token, 'GET', '/admin/v1/token')).statusCode
  }
  assert.equal(status, 401)
})
