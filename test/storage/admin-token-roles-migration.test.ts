/**
 * Migration 011 on a store the previous version left: every admin token made before roles is
 * `admin` (it keeps what it could do), a new one takes the role it is given, and the column
 * refuses any role but the closed list. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, upgradedStore } from '../helpers/old-database.js'

const OLD_TOKEN = ['adm_0000000000000old', 'old ops', 'c'.repeat(64), 'as_admin_Old1', 1_700_000_000_000] as const
const INSERT = 'INSERT INTO admin_tokens (id, name, hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5)'

async function checkMigrated(storage: Storage, forceRole: () => Promise<unknown>): Promise<void> {
  const [old] = await storage.adminTokens.list()
  assert.equal(old?.id, OLD_TOKEN[0])
  assert.equal(old?.role, 'admin')
  assert.equal((await storage.adminTokens.findByHash('c'.repeat(64)))?.role, 'admin')
  const { record } = await createAdminToken(storage.adminTokens, { name: 'viewer', role: 'read' })
  assert.equal((await storage.adminTokens.findByHash(record.hash))?.role, 'read')
  await assert.rejects(forceRole)
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 011 on ${engine}: existing admin tokens are admin; the role is a closed list`, async (t) => {
    const old = await upgradedStore(t, engine, '011', (run) => run(INSERT, OLD_TOKEN))
    if (old) await checkMigrated(old.storage, () => old.run("UPDATE admin_tokens SET role = 'owner'"))
  })
}
