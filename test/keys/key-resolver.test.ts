import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type ApiKeyRecord, hashKey } from '../../src/keys/api-key.js'
import { KeyResolver } from '../../src/keys/key-resolver.js'
import type { KeyRepository } from '../../src/keys/repository.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { createApiKey } from '../helpers/keys.js'

test('a lookup that races a revocation is not cached (regression)', async () => {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  try {
    const { key, record } = await createApiKey(storage.keys, { plan: 'free', name: 'x' }, 'production')
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    // A repository whose lookup returns the pre-revocation row late, as a slow replica or pool would.
    const slow: KeyRepository = {
      ...storage.keys,
      changesSince: (c) => storage.keys.changesSince(c),
      secretHashes: () => storage.keys.secretHashes(),
      findKeyByHash: async (hash): Promise<ApiKeyRecord | undefined> => {
        const row = await storage.keys.findKeyByHash(hash)
        await gate
        return row
      },
    }
    const resolver = new KeyResolver(slow, { env: 'production', refreshMs: 60_000 })
    await resolver.start()
    const pending = resolver.resolve(key)
    await storage.keys.revokeKey(record.id, Date.now())
    await resolver.refresh()
    release()
    assert.ok(await pending, 'the in-flight request may still pass')
    assert.equal(resolver.cachedCount, 0, 'but the stale record must not be cached')
    const again = await resolver.resolve(key)
    assert.notEqual(again?.revokedAt ?? null, null, 'now the revoked record, for the guard to refuse')
    assert.equal(resolver.cachedCount, 0, 'and a revoked key is never cached')
    await resolver.stop()
    assert.equal(hashKey(key), record.hash)
  } finally {
    await storage.close()
  }
})
