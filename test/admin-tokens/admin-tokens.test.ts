/** Admin tokens in storage (Storage.adminTokens), the same behaviour on SQLite and PostgreSQL. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AdminTokenResolver, createAdminToken, revokeAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { generateKey, hashKey } from '../../src/keys/api-key.js'
import { KnownSecrets } from '../../src/keys/known-secrets.js'
import type { Storage } from '../../src/storage/storage.js'
import { STORE_ENGINES } from '../helpers/stores.js'

/** A resolver as the admin listener has one, its filter of known secrets loaded from `storage`. */
async function resolverOf(storage: Storage): Promise<AdminTokenResolver> {
  const known = new KnownSecrets(() => storage.keys.secretHashes())
  await known.load()
  return new AdminTokenResolver(storage.adminTokens, known)
}

for (const engine of STORE_ENGINES) {
  describe(`admin tokens on ${engine.name}`, () => {
    test('only the hash and the display prefix are stored; the token resolves to its record', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const { token, record } = await createAdminToken(storage.adminTokens, 'ops', undefined, 1_000)
      assert.match(token, /^as_admin_[0-9A-Za-z]{38}$/)
      assert.match(record.id, /^adm_[0-9A-Za-z]{16}$/)
      const [stored] = await storage.adminTokens.list()
      assert.deepEqual(stored, {
        id: record.id,
        name: 'ops',
        hash: hashKey(token),
        prefix: token.slice(0, 13),
        role: 'admin',
        createdBy: null,
        createdAt: 1_000,
        revokedAt: null,
      })
      assert.equal(JSON.stringify(stored).includes(token.slice(13)), false)
      const resolver = await resolverOf(storage)
      assert.deepEqual(await resolver.resolve(token), { token: stored })
    })

    test('a role is stored and read back: read, or admin when none is given; any other is refused', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const viewer = await createAdminToken(storage.adminTokens, { name: 'viewer', role: 'read' })
      const ops = await createAdminToken(storage.adminTokens, { name: 'ops' })
      assert.equal(viewer.record.role, 'read')
      assert.equal(ops.record.role, 'admin')
      assert.deepEqual((await storage.adminTokens.list()).map((r) => [r.name, r.role]).sort(), [
        ['ops', 'admin'],
        ['viewer', 'read'],
      ])
      assert.equal((await (await resolverOf(storage)).resolve(viewer.token)).token?.role, 'read')
      await assert.rejects(createAdminToken(storage.adminTokens, { name: 'x', role: 'owner' as 'read' }), {
        name: 'Refusal',
        kind: 'invalid',
        field: 'role',
        message: 'role must be one of read, admin',
      })
    })

    test('revoke: once, then idempotent with the first time kept; a revoked token no longer resolves', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const { token, record } = await createAdminToken(storage.adminTokens, 'short', undefined, 1_000)
      assert.deepEqual(await revokeAdminToken(storage.adminTokens, record.id, undefined, 2_000), {
        record: { ...record, revokedAt: 2_000 },
        alreadyRevoked: false,
        alsoRevoked: [],
      })
      assert.deepEqual(await revokeAdminToken(storage.adminTokens, record.id, undefined, 3_000), {
        record: { ...record, revokedAt: 2_000 },
        alreadyRevoked: true,
        alsoRevoked: [],
      })
      await assert.rejects(revokeAdminToken(storage.adminTokens, 'adm_nope', undefined, 3_000), {
        name: 'Refusal',
        kind: 'not_found',
        message: 'No admin token with id adm_nope',
      })
      assert.deepEqual(await (await resolverOf(storage)).resolve(token), { problem: 'invalid', revokedTokenId: record.id })
    })

    test('a revocation goes to the key change log (and NOTIFY on PostgreSQL): every instance drops the cached token', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const { token, record } = await createAdminToken(storage.adminTokens, 'cached')
      const { cursor } = await storage.keys.changesSince(null)
      const pushed: string[] = []
      const unwatch = await storage.keys.watchChanges?.((hash) => pushed.push(hash))
      try {
        await revokeAdminToken(storage.adminTokens, record.id)
        await revokeAdminToken(storage.adminTokens, record.id)
        assert.deepEqual((await storage.keys.changesSince(cursor)).hashes, [hashKey(token)], 'once: a repeat changes nothing')
        if (unwatch !== undefined) {
          const deadline = performance.now() + 10_000
          while (!pushed.includes(hashKey(token)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20))
          assert.deepEqual(pushed, [hashKey(token)])
        }
      } finally {
        await unwatch?.()
      }
    })

    test('a creation goes to the key change log (and NOTIFY on PostgreSQL): every instance learns of the new token', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const { cursor } = await storage.keys.changesSince(null)
      const pushed: string[] = []
      const unwatch = await storage.keys.watchChanges?.((hash) => pushed.push(hash))
      try {
        const { token } = await createAdminToken(storage.adminTokens, 'new')
        assert.deepEqual((await storage.keys.changesSince(cursor)).hashes, [hashKey(token)])
        assert.ok((await storage.keys.secretHashes()).split(',').includes(hashKey(token)), 'and among the hashes a filter loads')
        if (unwatch !== undefined) {
          const deadline = performance.now() + 10_000
          while (!pushed.includes(hashKey(token)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20))
          assert.deepEqual(pushed, [hashKey(token)])
        }
      } finally {
        await unwatch?.()
      }
    })

    test('an API key is never an admin token, even one whose hash is stored as one', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const key = generateKey('production')
      await storage.adminTokens.insert({
        id: 'adm_forged',
        name: 'forged',
        hash: hashKey(key),
        prefix: 'as_live_xxxx',
        role: 'admin' as const,
        createdBy: null,
        createdAt: 1,
        revokedAt: null,
      })
      assert.deepEqual(await (await resolverOf(storage)).resolve(key), { problem: 'api_key' })
      assert.deepEqual(await (await resolverOf(storage)).resolve('as_admin_short'), { problem: 'invalid' })
    })
  })
}
