/** The audit log in storage (Storage.audit): filters, order and paging, the same on SQLite and PostgreSQL. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { AuditAction } from '../../src/changes/audit-actions.js'
import type { AuditEntry, AuditQuery } from '../../src/changes/audit-log.js'
import type { Storage } from '../../src/storage/storage.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const T0 = Date.UTC(2030, 0, 1, 10, 0, 0)
const KEY_A = 'key_AAAAAAAAAAAAAAAA'
const KEY_B = 'key_BBBBBBBBBBBBBBBB'

/** Eight entries, one a second: changes and reads, two keys, three actors. */
const LOG: Array<[AuditAction, string | null, 'admin_token' | 'cli' | 'system', string]> = [
  ['key.create', KEY_A, 'system', 'bootstrap'],
  ['key.read', KEY_A, 'admin_token', 'adm_one'],
  ['key.update', KEY_A, 'admin_token', 'adm_one'],
  ['key.usage', KEY_A, 'admin_token', 'adm_two'],
  ['key.create', KEY_B, 'cli', 'alice'],
  ['audit_log.list', null, 'admin_token', 'adm_one'],
  ['key.revoke', KEY_A, 'cli', 'alice'],
  ['key.list', null, 'admin_token', 'adm_two'],
]

async function fill(storage: Storage): Promise<void> {
  for (const [i, [action, keyId, type, id]] of LOG.entries()) {
    await storage.audit.write({ audit: [{ at: T0 + i * 1000, actor: { type, id }, action, keyId, details: { i }, requestId: null }] })
  }
}

/** The `i` of each entry listed, to compare with positions in LOG. */
const positions = (entries: AuditEntry[]) => entries.map((e) => e.details.i)

/** Every page of a query, following nextAfter. */
async function allPages(storage: Storage, query: Omit<AuditQuery, 'after'>): Promise<unknown[][]> {
  const pages: unknown[][] = []
  let after: number | undefined
  for (;;) {
    const page = await storage.audit.list({ ...query, after })
    pages.push(positions(page.entries))
    if (page.nextAfter === null) return pages
    after = page.nextAfter
  }
}

for (const engine of STORE_ENGINES) {
  describe(`audit log on ${engine.name}`, () => {
    test('each filter alone, and filters combined with AND', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      await fill(storage)
      const list = async (q: Omit<AuditQuery, 'limit'>) => positions((await storage.audit.list({ limit: 100, ...q })).entries)
      assert.deepEqual(await list({}), [0, 1, 2, 3, 4, 5, 6, 7])
      assert.deepEqual(await list({ keyId: KEY_A }), [0, 1, 2, 3, 6])
      assert.deepEqual(await list({ action: 'key.create' }), [0, 4])
      assert.deepEqual(await list({ kind: 'change' }), [0, 2, 4, 6])
      assert.deepEqual(await list({ kind: 'read' }), [1, 3, 5, 7])
      assert.deepEqual(await list({ actorType: 'cli' }), [4, 6])
      assert.deepEqual(await list({ actorId: 'adm_two' }), [3, 7])
      assert.deepEqual(await list({ from: T0 + 2000, to: T0 + 5000 }), [2, 3, 4], 'from inclusive, to exclusive')
      assert.deepEqual(await list({ keyId: KEY_A, kind: 'change', actorType: 'admin_token' }), [2])
      assert.deepEqual(await list({ action: 'key.read', kind: 'change' }), [], 'a read action is no change')
      assert.deepEqual(await list({ actorId: 'nobody' }), [])
    })

    test("an admin token's entries carry its name, read with the page (revoked tokens' too); other actors have none", async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      await fill(storage)
      const token = { hash: 'd'.repeat(64), prefix: 'as_admin_Dddd', role: 'read' as const, createdBy: null, createdAt: 1, revokedAt: null }
      await storage.adminTokens.insert({ ...token, id: 'adm_one', name: 'night shift' })
      await storage.adminTokens.insert({ ...token, id: 'adm_two', name: 'auditor', hash: 'e'.repeat(64) })
      await storage.adminTokens.revoke('adm_two', 2)
      const { entries } = await storage.audit.list({ limit: 100 })
      assert.deepEqual(
        entries.map((e) => e.actor),
        LOG.map(([, , type, id]) => ({
          type,
          id,
          ...(id === 'adm_one' ? { name: 'night shift' } : id === 'adm_two' ? { name: 'auditor' } : {}),
        })),
      )
    })

    test('newest first with order=desc; pages follow the order, with the filters', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      await fill(storage)
      assert.deepEqual(positions((await storage.audit.list({ limit: 100, order: 'desc' })).entries), [7, 6, 5, 4, 3, 2, 1, 0])
      assert.deepEqual(await allPages(storage, { limit: 3 }), [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7],
      ])
      assert.deepEqual(await allPages(storage, { limit: 3, order: 'desc' }), [
        [7, 6, 5],
        [4, 3, 2],
        [1, 0],
      ])
      assert.deepEqual(await allPages(storage, { limit: 2, order: 'desc', keyId: KEY_A }), [[6, 3], [2, 1], [0]])
      assert.deepEqual(await allPages(storage, { limit: 2, order: 'desc', kind: 'change' }), [
        [6, 4],
        [2, 0],
      ])
      assert.deepEqual(await allPages(storage, { limit: 4, kind: 'change' }), [[0, 2, 4, 6]], 'an exact last page has no next')
    })
  })
}
