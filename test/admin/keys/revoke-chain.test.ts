/**
 * Revoking a key of a rotation chain ends the grace period of the chain's other keys (a rotation
 * replaces a compromised or old secret): through app.inject on the admin API, the answer and the
 * audit log list every key revoked, this instance refuses them at once and another instance at its
 * next read of the key change log. See docs/keys.md, "Revocation".
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import type { ChangeContext } from '../../../src/changes/audit-log.js'
import { ChangeRecorder } from '../../../src/changes/change-recorder.js'
import { KeyService } from '../../../src/keys/key-service.js'
import { SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildTestApp, TEST_NOW } from '../../helpers/app.js'
import { type AdminTestApp, buildAdminTestApp } from '../helpers.js'

const CLI: ChangeContext = { actor: { type: 'cli', id: 'tester' } }
const HOUR = 3600

interface Chain {
  /** Oldest first: [A, B, C], A rotated to B, B to C, both within their grace period. */
  keys: string[]
  ids: string[]
}

/** A key rotated twice through the admin API, each old key kept for an hour. */
async function chain(t: AdminTestApp, name: string): Promise<Chain> {
  const created = (await t.call('POST', '/admin/v1/keys', { plan: 'pro', name })).json()
  const keys = [created.key as string]
  const ids = [created.apiKey.id as string]
  for (let i = 0; i < 2; i++) {
    const rotated = await t.call('POST', `/admin/v1/keys/${ids.at(-1)}/rotate`, { gracePeriodSeconds: HOUR })
    assert.equal(rotated.statusCode, 201, rotated.body)
    keys.push(rotated.json().key)
    ids.push(rotated.json().apiKey.id)
  }
  return { keys, ids }
}

const status = async (t: AdminTestApp, key: string) => (await t.api.inject({ url: '/v1/pets', headers: bearer(key) })).statusCode

test('revoking the current key revokes the rotated keys still in their grace period: the answer, the audit log, at once here', async (t) => {
  const app = await buildAdminTestApp(t)
  const { keys, ids } = await chain(app, 'compromised')
  const [a, b, c] = ids as [string, string, string]
  for (const key of keys) assert.equal(await status(app, key), 200, 'the old keys work during their grace period')

  const res = await app.call('POST', `/admin/v1/keys/${c}/revoke`, undefined, { 'x-request-id': 'stop-the-chain' })
  assert.equal(res.statusCode, 200, res.body)
  const body = res.json()
  assert.deepEqual([body.apiKey.id, body.apiKey.state, body.alreadyRevoked], [c, 'revoked', false])
  assert.deepEqual(
    body.alsoRevoked.map((k: { id: string; state: string; revokedAt: string }) => [k.id, k.state, k.revokedAt]),
    [
      [b, 'revoked', body.apiKey.revokedAt],
      [a, 'revoked', body.apiKey.revokedAt],
    ],
    'every key revoked, newest first, at the same time',
  )
  for (const key of keys) assert.equal(await status(app, key), 401, 'refused at once by this instance')

  const audit = (await app.call('GET', '/admin/v1/audit-log?action=key.revoke')).json().data
  assert.deepEqual(
    audit.map((e: { keyId: string; details: unknown; requestId: string; actor: { id: string } }) => [
      e.keyId,
      e.details,
      e.requestId,
      e.actor.id,
    ]),
    [
      [c, { alsoRevoked: [b, a] }, 'stop-the-chain', app.tokenId],
      [b, { revokedWith: c }, 'stop-the-chain', app.tokenId],
      [a, { revokedWith: c }, 'stop-the-chain', app.tokenId],
    ],
    'one entry per key revoked',
  )

  const again = (await app.call('POST', `/admin/v1/keys/${c}/revoke`)).json()
  assert.deepEqual([again.alreadyRevoked, again.alsoRevoked], [true, []], 'idempotent: nothing more to revoke')
})

test('revoking an old key ends the other grace periods of its chain, and leaves the current key working', async (t) => {
  const app = await buildAdminTestApp(t)
  const { keys, ids } = await chain(app, 'retired early')
  const res = (await app.call('POST', `/admin/v1/keys/${ids[0]}/revoke`)).json()
  assert.deepEqual([res.apiKey.id, res.apiKey.rotatedTo, res.alsoRevoked.map((k: { id: string }) => k.id)], [ids[0], ids[1], [ids[1]]])
  assert.deepEqual(await Promise.all(keys.map((k) => status(app, k))), [401, 401, 200])
  // A grace period already over is left as it was (expired, not revoked).
  const next = await chain(app, 'later')
  app.clock.advance(HOUR * 1000)
  const later = (await app.call('POST', `/admin/v1/keys/${next.ids[2]}/revoke`)).json()
  assert.deepEqual(later.alsoRevoked, [])
  assert.deepEqual(
    (await Promise.all(next.ids.slice(0, 2).map((id) => app.call('GET', `/admin/v1/keys/${id}`)))).map((r) => r.json().state),
    ['expired', 'expired'],
  )
})

test('revoking again a key revoked before its chain was revoked with it ends the grace periods still running', async (t) => {
  // A key revoked by an earlier version, which revoked the key named alone: its predecessors still work.
  const dir = mkdtempSync(join(tmpdir(), 'as-revoke-chain-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'store.db')
  const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  const app = await buildAdminTestApp(t, { storage })
  const { keys, ids } = await chain(app, 'revoked alone')
  const raw = new Database(file)
  raw.prepare('UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE id = ?').run(TEST_NOW, TEST_NOW, ids[2])
  raw.close()

  const res = (await app.call('POST', `/admin/v1/keys/${ids[2]}/revoke`)).json()
  assert.deepEqual([res.alreadyRevoked, res.alsoRevoked.map((k: { id: string }) => k.id)], [true, [ids[1], ids[0]]])
  for (const key of keys.slice(0, 2)) assert.equal(await status(app, key), 401)
  const last = (await app.call('GET', `/admin/v1/audit-log?keyId=${ids[2]}&action=key.revoke`)).json().data.at(-1)
  assert.deepEqual(last.details, { alreadyRevoked: true, alsoRevoked: [ids[1], ids[0]] })
})

test('a chain revoked by another instance (or the CLI) is refused here at the next read of the key change log', async (t) => {
  const service = await buildTestApp(t)
  // The CLI, or another instance: its own key service on the same store, without this instance's cache.
  const elsewhere = new KeyService({
    keys: service.storage.keys,
    recorder: new ChangeRecorder(service.storage.audit, service.clock),
    limiter: service.limiter,
    env: service.config.env,
    clock: service.clock,
  })
  const first = await elsewhere.createKey({ plan: 'free', name: 'elsewhere' }, CLI)
  const second = await elsewhere.rotateKey(first.view.id, { graceSeconds: HOUR }, CLI)
  const get = (key: string) => service.app.inject({ url: '/v1/pets', headers: bearer(key) })
  for (const key of [first.key, second.key]) assert.equal((await get(key)).statusCode, 200, 'cached by its first request')

  const revoked = await elsewhere.revokeKey(second.view.id, CLI)
  assert.deepEqual(
    revoked.alsoRevoked.map((k) => k.id),
    [first.view.id],
  )
  assert.equal((await get(first.key)).statusCode, 200, 'cached until the change log is read')
  await service.domain.keyResolver.refresh()
  for (const key of [first.key, second.key]) assert.equal((await get(key)).statusCode, 401)
})
