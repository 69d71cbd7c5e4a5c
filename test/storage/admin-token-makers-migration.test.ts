/**
 * Migration 016 on a store the previous version left: each admin token made through the admin API
 * gets its maker from its `admin_token.create` audit entry (a token made with the CLI, or whose
 * maker is not a token, stays a root); a token still active under a revoked one (what the previous
 * version's revocation left working) is revoked, audited and in the change log; and the tree works
 * on what it made of them. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { revokeAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, type RunSql, upgradedStore } from '../helpers/old-database.js'

const T = 1_790_000_000_000
const TOKEN = 'INSERT INTO admin_tokens (id, name, hash, prefix, role, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)'
const AUDIT =
  'INSERT INTO audit_log (at, actor_type, actor_id, action, key_id, details, request_id) VALUES ($1, $2, $3, $4, NULL, $5, NULL)'

/** id, maker (an admin token id, `cli`, or a token gone from the table), revoked at. */
const TOKENS: Array<[string, string, number | null]> = [
  ['adm_operator0000000', 'cli', null],
  ['adm_colleague000000', 'adm_operator0000000', null],
  ['adm_stolen000000000', 'cli', T + 10],
  ['adm_thief1000000000', 'adm_stolen000000000', null],
  ['adm_thief2000000000', 'adm_thief1000000000', null],
  ['adm_undone000000000', 'adm_stolen000000000', T + 20],
  ['adm_unknownmaker000', 'adm_gone00000000000', null],
]
const hashOf = (i: number) => String(i).repeat(64)

async function seed(run: RunSql): Promise<void> {
  for (const [i, [id, maker, revokedAt]] of TOKENS.entries()) {
    await run(TOKEN, [id, id.slice(4, 12), hashOf(i), `as_admin_${id.slice(4, 8)}`, 'admin', T + i, revokedAt])
    const [actorType, actorId] = maker === 'cli' ? ['cli', 'ops'] : ['admin_token', maker]
    await run(AUDIT, [
      T + i,
      actorType,
      actorId,
      'admin_token.create',
      JSON.stringify({ tokenId: id, name: id.slice(4, 12), role: 'admin' }),
    ])
  }
}

/** `start`: a time before the migration ran. */
async function checkMigrated(storage: Storage, start: number): Promise<void> {
  const tokens = new Map((await storage.adminTokens.list()).map((r) => [r.id, r]))
  assert.deepEqual(
    TOKENS.map(([id]) => tokens.get(id)?.createdBy),
    [null, 'adm_operator0000000', null, 'adm_stolen000000000', 'adm_thief1000000000', 'adm_stolen000000000', null],
  )
  const revokedAt = TOKENS.map(([id]) => tokens.get(id)?.revokedAt)
  assert.deepEqual([revokedAt[0], revokedAt[1], revokedAt[2], revokedAt[5], revokedAt[6]], [null, null, T + 10, T + 20, null])
  for (const i of [3, 4]) {
    // The engine's clock, in ms (SQLite's julianday may round a millisecond down).
    const at = revokedAt[i]
    assert.ok(typeof at === 'number' && at >= start - 1 && at <= Date.now(), `${TOKENS[i]![0]} revoked by the migration: ${at}`)
  }

  const entries = (await storage.audit.list({ action: 'admin_token.revoke', limit: 10 })).entries
  assert.deepEqual(
    entries.map((e) => [e.actor, e.details]),
    [3, 4].map((i) => [
      { type: 'system', id: 'migration-016' },
      {
        tokenId: TOKENS[i]![0],
        name: TOKENS[i]![0].slice(4, 12),
        prefix: `as_admin_${TOKENS[i]![0].slice(4, 8)}`,
        createdBy: TOKENS[i]![1],
        revokedWith: TOKENS[i]![1],
      },
    ]),
  )
  // In the change log, so that a server running the previous version's cache drops them.
  assert.deepEqual((await storage.keys.changesSince(0)).hashes.sort(), [hashOf(3), hashOf(4)])

  // The tree on what the migration made: the operator's revocation takes the colleague's token.
  const outcome = await revokeAdminToken(storage.adminTokens, 'adm_operator0000000')
  assert.deepEqual(
    outcome?.alsoRevoked.map((r) => r.id),
    ['adm_colleague000000'],
  )
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 016 on ${engine}: makers from the audit log; what a revocation left working is revoked`, async (t) => {
    const start = Date.now()
    const old = await upgradedStore(t, engine, '016', seed)
    if (old) await checkMigrated(old.storage, start)
  })
}
