/**
 * A stolen admin token and its cleanup, through app.inject: the thief mints T1 with the operator's
 * token T and T2 with T1; one revocation of T (through the admin API, or by the CLI from another
 * process) refuses T, T1 and T2 on every instance, and the audit log shows what went with T. The
 * same story with real server processes: test/system/admin/stolen-admin-token.test.ts.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { createAdminToken, revokeAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js'
import { REVOCATION_DEADLINE_MS } from '../../helpers/wait.js'
import { buildAdminTestApp } from '../helpers.js'

const as = (app: FastifyInstance, token: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
  app.inject({
    method,
    url: `/admin/v1${url}`,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })

interface Minted {
  token: string
  adminToken: { id: string; createdBy: string | null }
}

/** What the thief does with a stolen token: an admin token of its own, made through the admin API. */
async function mint(app: FastifyInstance, token: string, name: string): Promise<Minted> {
  const res = await as(app, token, 'POST', '/admin-tokens', { name, role: 'admin' })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

test('the operator revokes a stolen token through the admin API: what the thief made with it is refused at once too', async (t) => {
  const app = await buildAdminTestApp(t) // app.token: the operator's other token, made with the CLI
  const stolen = await createAdminToken(app.storage.adminTokens, 'operator console')
  const t1 = await mint(app.app, stolen.token, 'backup')
  const t2 = await mint(app.app, t1.token, 'backup of backup')
  for (const token of [stolen.token, t1.token, t2.token]) assert.equal((await as(app.app, token, 'GET', '/keys')).statusCode, 200, 'cached')

  const res = await app.call('POST', `/admin/v1/admin-tokens/${stolen.record.id}/revoke`)
  assert.equal(res.statusCode, 200, res.body)
  for (const token of [stolen.token, t1.token, t2.token]) {
    const refused = await as(app.app, token, 'GET', '/keys')
    assert.deepEqual([refused.statusCode, refused.json().message], [401, 'Invalid or revoked admin token'], 'at once, on this instance')
  }
  assert.equal((await as(app.app, t1.token, 'POST', '/admin-tokens', { name: 'another', role: 'admin' })).statusCode, 401)
  assert.equal((await app.call('GET', '/admin/v1/keys')).statusCode, 200, "the operator's own token works")
  assert.deepEqual(
    res.json().alsoRevoked.map((x: { id: string; revokedAt: string }) => [x.id, x.revokedAt]),
    [
      [t1.adminToken.id, res.json().adminToken.revokedAt],
      [t2.adminToken.id, res.json().adminToken.revokedAt],
    ],
  )

  assert.deepEqual([t1.adminToken.createdBy, t2.adminToken.createdBy], [stolen.record.id, t1.adminToken.id])
  const listed = (await app.call('GET', '/admin/v1/admin-tokens')).json().data as Array<{ id: string; createdBy: string | null }>
  assert.deepEqual(
    new Map(listed.map((x) => [x.id, x.createdBy])),
    new Map([
      [app.tokenId, null],
      [stolen.record.id, null], // revoked, as everything under it
      [t1.adminToken.id, stolen.record.id],
      [t2.adminToken.id, t1.adminToken.id],
    ]),
  )

  const audit = (await app.call('GET', '/admin/v1/audit-log?action=admin_token.revoke&order=asc')).json().data
  assert.deepEqual(
    audit.map((e: { actor: { id: string }; requestId: string; details: unknown }) => [e.actor.id, e.requestId, e.details]),
    [
      [
        app.tokenId,
        res.headers['x-request-id'],
        {
          tokenId: stolen.record.id,
          name: 'operator console',
          prefix: stolen.record.prefix,
          alsoRevoked: [t1.adminToken.id, t2.adminToken.id],
        },
      ],
      [
        app.tokenId,
        res.headers['x-request-id'],
        {
          tokenId: t1.adminToken.id,
          name: 'backup',
          prefix: t1.token.slice(0, 13),
          createdBy: stolen.record.id,
          revokedWith: stolen.record.id,
        },
      ],
      [
        app.tokenId,
        res.headers['x-request-id'],
        {
          tokenId: t2.adminToken.id,
          name: 'backup of backup',
          prefix: t2.token.slice(0, 13),
          createdBy: t1.adminToken.id,
          revokedWith: stolen.record.id,
        },
      ],
    ],
  )
})

test('the operator revokes a stolen token with the CLI (another process): every instance refuses what the thief made with it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'as-admin-theft-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'store.db')
  const env = { KEY_REFRESH_MS: '50' }
  const here = await buildAdminTestApp(t, { env, storage: new SqliteStorage({ databaseUrl: file, durability: 'process' }) })
  const there = await buildAdminTestApp(t, { env, storage: new SqliteStorage({ databaseUrl: file, durability: 'process' }) })
  const stolen = await createAdminToken(here.storage.adminTokens, 'operator console')
  const t1 = await mint(here.app, stolen.token, 'backup')
  const t2 = await mint(there.app, t1.token, 'backup of backup')
  const tokens = [stolen.token, t1.token, t2.token]
  for (const app of [here.app, there.app]) {
    for (const token of tokens) assert.equal((await as(app, token, 'GET', '/token')).statusCode, 200, 'cached on both')
  }

  // The CLI: its own connection to the file, telling no server.
  const cli = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  t.after(() => cli.close())
  const outcome = await revokeAdminToken(cli.adminTokens, stolen.record.id, { actor: { type: 'cli', id: 'ops' } })
  const deadline = performance.now() + REVOCATION_DEADLINE_MS
  for (const app of [here.app, there.app]) {
    for (const token of tokens) {
      let status = 200
      while (status === 200 && performance.now() < deadline) {
        status = (await as(app, token, 'GET', '/token')).statusCode
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20))
      }
      assert.equal(status, 401, `still accepted ${REVOCATION_DEADLINE_MS} ms after the CLI's revocation`)
    }
  }
  assert.deepEqual(
    outcome?.alsoRevoked.map((x) => x.id),
    [t1.adminToken.id, t2.adminToken.id],
  )

  const audit = (await here.call('GET', '/admin/v1/audit-log?action=admin_token.revoke&order=asc')).json().data
  assert.deepEqual(
    audit.map((e: { actor: unknown; details: { tokenId: string; revokedWith?: string } }) => [
      e.actor,
      e.details.tokenId,
      e.details.revokedWith,
    ]),
    [
      [{ type: 'cli', id: 'ops' }, stolen.record.id, undefined],
      [{ type: 'cli', id: 'ops' }, t1.adminToken.id, stolen.record.id],
      [{ type: 'cli', id: 'ops' }, t2.adminToken.id, stolen.record.id],
    ],
  )
})

test('the thief cannot take down the token that made theirs, nor any above it (409): that revocation would take theirs too', async (t) => {
  const app = await buildAdminTestApp(t)
  const stolen = await createAdminToken(app.storage.adminTokens, 'operator console')
  const t1 = await mint(app.app, stolen.token, 'backup')
  const t2 = await mint(app.app, t1.token, 'backup of backup')
  for (const [token, target] of [
    [t1.token, stolen.record.id],
    [t2.token, stolen.record.id],
    [t2.token, t1.adminToken.id],
  ] as const) {
    const res = await as(app.app, token, 'POST', `/admin-tokens/${target}/revoke`)
    assert.deepEqual([res.statusCode, res.json().code], [409, 'conflict'], res.body)
    assert.match(res.json().message, /made this one \(or made the token that did\)/)
  }
  assert.ok(
    (await app.storage.adminTokens.list()).every((x) => x.revokedAt === null),
    'nothing revoked',
  )
  // Downwards it may: the stolen token revokes what was made with it.
  const down = await as(app.app, stolen.token, 'POST', `/admin-tokens/${t1.adminToken.id}/revoke`)
  assert.equal(down.statusCode, 200, down.body)
  assert.deepEqual(
    down.json().alsoRevoked.map((x: { id: string }) => x.id),
    [t2.adminToken.id],
  )
})
