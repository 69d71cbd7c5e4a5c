/**
 * The tree of admin tokens, the same on SQLite and PostgreSQL: a token made by another records its
 * maker, has its role at most (checked by the function and again by the store, in the insert's
 * transaction), and a revocation takes everything under the token named, in one transaction, with
 * the change log and the audit entries. The feature's functions and the stores' contract together.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { AdminTokenInsert, AdminTokenRecord } from '../../src/admin-tokens/admin-token-repository.js'
import { AdminTokenResolver, createAdminToken, makersOf, revokeAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { toApiError } from '../../src/http/error-handler.js'
import { generateAdminToken, generateAdminTokenId, hashKey } from '../../src/keys/api-key.js'
import { KnownSecrets } from '../../src/keys/known-secrets.js'
import type { Storage } from '../../src/storage/storage.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const CLI = { actor: { type: 'cli' as const, id: 'ops' } }

/** A token made by `by` (a record the store holds), as an insert would be asked for it. */
function madeBy(by: AdminTokenRecord | null, role: AdminTokenRecord['role']): AdminTokenRecord {
  const secret = generateAdminToken()
  return {
    id: generateAdminTokenId(),
    name: `by ${by?.name ?? 'cli'}`,
    hash: hashKey(secret),
    prefix: secret.slice(0, 13),
    role,
    createdBy: by?.id ?? null,
    createdAt: 5,
    revokedAt: null,
  }
}

async function resolverOf(storage: Storage): Promise<AdminTokenResolver> {
  const known = new KnownSecrets(() => storage.keys.secretHashes())
  await known.load()
  return new AdminTokenResolver(storage.adminTokens, known)
}

/** Refused, answered over HTTP with this code and status. */
const refusedWith = (code: string, status: number) => (error: unknown) => {
  const answer = toApiError(error)
  return answer.code === code && answer.status === status
}

for (const engine of STORE_ENGINES) {
  describe(`the tree of admin tokens on ${engine.name}`, () => {
    test('a token makes tokens of its role at most: a read token never an admin one (the function, and the store itself)', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const reader = await createAdminToken(storage.adminTokens, { name: 'reader', role: 'read' })
      const admin = await createAdminToken(storage.adminTokens, { name: 'admin', role: 'admin' })

      await assert.rejects(
        createAdminToken(storage.adminTokens, { name: 'escalated', role: 'admin', by: reader.record }),
        (error: unknown) =>
          refusedWith('forbidden_role', 403)(error) &&
          /role read: it may make admin tokens of the roles read, not admin/.test((error as Error).message),
      )
      // The store refuses it too, whatever its caller checked: nothing is written.
      const { cursor } = await storage.keys.changesSince(null)
      assert.equal(await storage.adminTokens.insert(madeBy(reader.record, 'admin')), 'above_maker')
      assert.deepEqual((await storage.keys.changesSince(cursor)).hashes, [])
      assert.deepEqual((await storage.adminTokens.list()).map((r) => r.name).sort(), ['admin', 'reader'])

      const readByRead = await createAdminToken(storage.adminTokens, { name: 'read by read', role: 'read', by: reader.record })
      const readByAdmin = await createAdminToken(storage.adminTokens, { name: 'read by admin', role: 'read', by: admin.record })
      const adminByAdmin = await createAdminToken(storage.adminTokens, { name: 'admin by admin', role: 'admin', by: admin.record })
      assert.deepEqual(
        [readByRead, readByAdmin, adminByAdmin].map(({ record }) => [record.role, record.createdBy]),
        [
          ['read', reader.record.id],
          ['read', admin.record.id],
          ['admin', admin.record.id],
        ],
      )
      const stored = await storage.adminTokens.findByHash(adminByAdmin.record.hash)
      assert.equal(stored?.createdBy, admin.record.id, 'the maker is stored')
      assert.equal((await storage.adminTokens.findByHash(admin.record.hash))?.createdBy, null, 'the CLI makes roots')
    })

    test('a revoked or unknown token makes nothing (the store checks the maker in the insert’s transaction): 401', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const maker = await createAdminToken(storage.adminTokens, 'maker')
      await revokeAdminToken(storage.adminTokens, maker.record.id)
      await assert.rejects(
        createAdminToken(storage.adminTokens, { name: 'late', role: 'read', by: maker.record }),
        refusedWith('unauthorized', 401),
      )
      assert.equal(await storage.adminTokens.insert(madeBy(maker.record, 'read')), 'maker_revoked')
      assert.equal(await storage.adminTokens.insert(madeBy({ ...maker.record, id: 'adm_0000000000000000' }, 'read')), 'maker_revoked')
      assert.deepEqual(
        (await storage.adminTokens.list()).map((r) => r.name),
        ['maker'],
      )
    })

    test('revoking a token revokes everything under it, in one change: at once here, through the change log elsewhere, audited', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const root = await createAdminToken(storage.adminTokens, 'operator', CLI, 1_000)
      const other = await createAdminToken(storage.adminTokens, 'other operator', CLI, 1_000)
      const by = (maker: AdminTokenRecord, name: string, role: AdminTokenRecord['role'] = 'admin') =>
        createAdminToken(storage.adminTokens, { name, role, by: maker }, { actor: { type: 'admin_token', id: maker.id } }, 2_000)
      const t1 = await by(root.record, 'stolen 1')
      const t2 = await by(t1.record, 'stolen 2')
      const t3 = await by(t2.record, 'stolen 3', 'read')
      const sibling = await by(root.record, 'colleague', 'read')
      const elsewhere = await by(other.record, 'other colleague')
      const resolver = await resolverOf(storage)
      for (const { token } of [root, t1, t2, t3, sibling, elsewhere]) assert.ok((await resolver.resolve(token)).token, 'cached')
      assert.deepEqual(makersOf(await storage.adminTokens.list(), t3.record), [t2.record.id, t1.record.id, root.record.id])

      const { cursor } = await storage.keys.changesSince(null)
      const outcome = await revokeAdminToken(storage.adminTokens, t1.record.id, CLI, 3_000)
      assert.deepEqual(
        [outcome?.record.id, outcome?.record.revokedAt, outcome?.alreadyRevoked, outcome?.alsoRevoked.map((r) => [r.id, r.revokedAt])],
        [
          t1.record.id,
          3_000,
          false,
          [
            [t2.record.id, 3_000],
            [t3.record.id, 3_000],
          ],
        ],
        'makers first',
      )
      // Another instance learns of all three from the change log; this one is told (the admin API forgets them).
      assert.deepEqual((await storage.keys.changesSince(cursor)).hashes.sort(), [t1.record.hash, t2.record.hash, t3.record.hash].sort())
      for (const { record } of [t1, t2, t3]) resolver.forget(record.hash)
      for (const { token } of [t1, t2, t3]) assert.equal((await resolver.resolve(token)).problem, 'invalid')
      for (const { token } of [root, sibling, elsewhere]) assert.ok((await resolver.resolve(token)).token, 'above and beside: untouched')

      const entries = (await storage.audit.list({ action: 'admin_token.revoke', limit: 10, order: 'asc' })).entries
      assert.deepEqual(
        entries.map((e) => [e.actor.type, e.at, e.details]),
        [
          ['cli', 3_000, { tokenId: t1.record.id, name: 'stolen 1', prefix: t1.record.prefix, alsoRevoked: [t2.record.id, t3.record.id] }],
          [
            'cli',
            3_000,
            { tokenId: t2.record.id, name: 'stolen 2', prefix: t2.record.prefix, createdBy: t1.record.id, revokedWith: t1.record.id },
          ],
          [
            'cli',
            3_000,
            { tokenId: t3.record.id, name: 'stolen 3', prefix: t3.record.prefix, createdBy: t2.record.id, revokedWith: t1.record.id },
          ],
        ],
      )

      // The root next: what is still active under it goes (the colleague), the rest stays as it was.
      const again = await revokeAdminToken(storage.adminTokens, root.record.id, CLI, 4_000)
      assert.deepEqual(
        again?.alsoRevoked.map((r) => r.id),
        [sibling.record.id],
      )
      const states = new Map((await storage.adminTokens.list()).map((r) => [r.id, r.revokedAt]))
      assert.deepEqual(
        [root, t1, t2, t3, sibling, other, elsewhere].map(({ record }) => states.get(record.id)),
        [4_000, 3_000, 3_000, 3_000, 4_000, null, null],
      )
      // A repeat changes nothing and says so.
      assert.deepEqual(await revokeAdminToken(storage.adminTokens, root.record.id, undefined, 5_000), {
        record: { ...root.record, revokedAt: 4_000 },
        alreadyRevoked: true,
        alsoRevoked: [],
      })
    })

    test('through the admin API (by a token): not itself nor a token above it (409), anything else', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const root = await createAdminToken(storage.adminTokens, 'operator')
      const t1 = await createAdminToken(storage.adminTokens, { name: 'one', by: root.record })
      const t2 = await createAdminToken(storage.adminTokens, { name: 'two', by: t1.record })
      const peer = await createAdminToken(storage.adminTokens, 'peer')
      for (const target of [t2, t1, root]) {
        await assert.rejects(revokeAdminToken(storage.adminTokens, target.record.id, undefined, 1, t2.record), (error: unknown) =>
          refusedWith('conflict', 409)(error),
        )
      }
      assert.ok(
        (await storage.adminTokens.list()).every((r) => r.revokedAt === null),
        'nothing revoked',
      )
      // A token above revokes one below; a peer revokes a root it did not make, and its tree.
      assert.equal((await revokeAdminToken(storage.adminTokens, t2.record.id, undefined, 2, root.record))?.alreadyRevoked, false)
      const byPeer = await revokeAdminToken(storage.adminTokens, root.record.id, undefined, 3, peer.record)
      assert.deepEqual(
        byPeer?.alsoRevoked.map((r) => r.id),
        [t1.record.id],
      )
    })
  })
}

test('PostgreSQL: tokens minted while their maker is being revoked never outlive it (the insert and the walk take turns)', async (t) => {
  const engine = STORE_ENGINES.find((e) => e.name === 'PostgreSQL')!
  const storage = await engine.open(t)
  if (storage === undefined) return
  for (let round = 0; round < 5; round++) {
    const maker = await createAdminToken(storage.adminTokens, `maker ${round}`)
    const child = await createAdminToken(storage.adminTokens, { name: `child ${round}`, by: maker.record })
    // Mints with the maker and with its child, racing one revocation of the maker on the pool's connections.
    const mints: Array<Promise<AdminTokenInsert>> = Array.from({ length: 8 }, (_, i) =>
      storage.adminTokens.insert(madeBy(i % 2 === 0 ? maker.record : child.record, 'read')),
    )
    const revocation = revokeAdminToken(storage.adminTokens, maker.record.id)
    const outcomes: AdminTokenInsert[] = await Promise.all(mints)
    await revocation
    const under: AdminTokenRecord[] = (await storage.adminTokens.list()).filter((r) =>
      makersOf([maker.record, child.record], r).includes(maker.record.id),
    )
    assert.ok(under.length >= 1 + outcomes.filter((o) => o === 'inserted').length, 'every mint is either refused or stored')
    assert.deepEqual(
      under.filter((r) => r.revokedAt === null).map((r) => r.id),
      [],
      `round ${round}: ${outcomes.join(', ')}`,
    )
  }
})
