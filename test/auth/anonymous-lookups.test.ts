/**
 * What anonymous traffic costs storage (issue 28, item 3), counted with a wrapper around the
 * store's lookups: a made-up key or admin token from an address the limiter already refuses is
 * refused without a lookup; identical lookups in flight share one; a valid admin token is read
 * once; a key created a moment ago by another instance works at once (no negative cache). A valid
 * key or token from a refused address: known-secrets.test.ts.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { addressIdentity } from '../../src/auth/address-identity.js'
import { generateAdminToken, generateKey } from '../../src/keys/api-key.js'
import { newKey } from '../../src/keys/key-service.js'
import type { RateLimiter } from '../../src/limits/limiter.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { MINUTE_MS } from '../../src/limits/policy.js'
import { ManualClock } from '../../src/shared/clock.js'
import { ANONYMOUS_QUOTA } from '../../src/shared/plans.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { bearer, buildTestApp, memoryStorage, TEST_NOW } from '../helpers/app.js'

/** Counts the store's lookups of presented secrets; each answers after `delayMs`, as a networked database would. */
function countLookups(storage: Storage, delayMs = 0): { keys: number; adminTokens: number } {
  const counts = { keys: 0, adminTokens: 0 }
  const pause = () => new Promise((resolve) => setTimeout(resolve, delayMs))
  const findKey = storage.keys.findKeyByHash.bind(storage.keys)
  storage.keys.findKeyByHash = async (hash) => {
    counts.keys++
    if (delayMs > 0) await pause()
    return findKey(hash)
  }
  const findToken = storage.adminTokens.findByHash.bind(storage.adminTokens)
  storage.adminTokens.findByHash = async (hash) => {
    counts.adminTokens++
    if (delayMs > 0) await pause()
    return findToken(hash)
  }
  return counts
}

describe('a refused address costs storage nothing', () => {
  test('made-up API keys from an address over its limit, then banned: no lookup once refused', async (context) => {
    const storage = memoryStorage()
    const lookups = countLookups(storage)
    const t = await buildTestApp(context, { storage })
    const send = () => t.app.inject({ url: '/v1/pets', remoteAddress: '10.9.0.1', headers: bearer(generateKey('production')) })
    for (let i = 0; i < ANONYMOUS_QUOTA.perMinute; i++) assert.equal((await send()).statusCode, 401)
    assert.equal(lookups.keys, ANONYMOUS_QUOTA.perMinute, 'each allowed guess is looked up')
    const codes: string[] = []
    for (let i = 0; i < 100; i++) {
      const res = await send()
      assert.equal(res.statusCode, 429)
      codes.push(res.json().code)
    }
    assert.equal(lookups.keys, ANONYMOUS_QUOTA.perMinute, 'no lookup once the address is refused')
    // The refused guesses still count as rejections: the address is banned as before.
    assert.equal(codes[0], 'rate_limited')
    assert.equal(codes.at(-1), 'key_banned')
    const banned = await send()
    assert.match(banned.json().message, /^This client address is temporarily banned/)
    assert.ok(Number(banned.headers['retry-after']) > 0)
    assert.equal(lookups.keys, ANONYMOUS_QUOTA.perMinute)
    // Another address is not affected.
    const other = await t.app.inject({ url: '/v1/pets', remoteAddress: '10.9.0.2', headers: bearer(generateKey('production')) })
    assert.equal(other.statusCode, 401)
    assert.equal(lookups.keys, ANONYMOUS_QUOTA.perMinute + 1)
  })

  test('made-up admin tokens from an address over its limit: no lookup once refused', async (context) => {
    const storage = memoryStorage()
    const lookups = countLookups(storage)
    const t = await buildTestApp(context, { storage })
    const admin = await t.admin()
    const send = () =>
      admin.inject({
        url: '/admin/v1/keys',
        remoteAddress: '10.9.0.3',
        headers: { authorization: `Bearer ${generateAdminToken()}` },
      })
    for (let i = 0; i < ANONYMOUS_QUOTA.perMinute; i++) assert.equal((await send()).statusCode, 401)
    assert.equal(lookups.adminTokens, ANONYMOUS_QUOTA.perMinute)
    for (let i = 0; i < 100; i++) assert.equal((await send()).statusCode, 429)
    assert.equal(lookups.adminTokens, ANONYMOUS_QUOTA.perMinute, 'no lookup once the address is refused')
    assert.equal((await send()).json().code, 'key_banned')
  })

  test('a refusal that lifts between the peek and the count: storage is asked, the request counted once', async (context) => {
    const clock = new ManualClock(TEST_NOW)
    const inner = new MemoryLimiter(clock, { threshold: 1000, baseSeconds: 60, maxSeconds: 3600 })
    let turnOverAfterPeek = false
    // The real limiter, with the minute turning over right after a peek (the race the guard must survive).
    const limiter: RateLimiter = {
      kind: 'memory',
      consume: (identity, quota) => inner.consume(identity, quota),
      peek: async (identity, quota) => {
        const usage = await inner.peek(identity, quota)
        if (turnOverAfterPeek) clock.set(clock.now() - (clock.now() % MINUTE_MS) + MINUTE_MS)
        turnOverAfterPeek = false
        return usage
      },
      ping: async () => {},
      close: () => inner.close(),
    }
    const storage = memoryStorage()
    const lookups = countLookups(storage)
    const t = await buildTestApp(context, { storage, limiter, clock })
    const from = (headers: Record<string, string>) => t.app.inject({ url: '/v1/pets', remoteAddress: '10.9.0.6', headers })
    for (let i = 0; i < ANONYMOUS_QUOTA.perMinute; i++) await from({})
    assert.equal((await from({})).statusCode, 429)

    turnOverAfterPeek = true
    const unknown = await from(bearer(generateKey('production')))
    assert.equal(unknown.statusCode, 401, 'looked up once the address is allowed again')
    assert.equal(unknown.headers['x-ratelimit-remaining'], String(ANONYMOUS_QUOTA.perMinute - 1), 'counted once')

    for (let i = 1; i < ANONYMOUS_QUOTA.perMinute; i++) await from({})
    assert.equal((await from({})).statusCode, 429)
    const key = await t.key()
    const looked = lookups.keys
    turnOverAfterPeek = true
    const valid = await from(bearer(key))
    assert.equal(valid.statusCode, 200, 'a valid key is judged by its own plan')
    assert.equal(lookups.keys, looked + 1)
    const address = await limiter.peek(addressIdentity('10.9.0.6'), ANONYMOUS_QUOTA)
    assert.equal(address.minute.used, 1, 'the address counted this request once, at the peek')
  })
})

describe('lookups that reach storage', () => {
  test('identical lookups in flight share one query (single flight)', async (context) => {
    const storage = memoryStorage()
    const lookups = countLookups(storage, 30)
    const t = await buildTestApp(context, { storage })
    const madeUp = bearer(generateKey('production'))
    const unknown = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.app.inject({ url: '/v1/pets', remoteAddress: `10.9.1.${i}`, headers: madeUp })),
    )
    assert.deepEqual(new Set(unknown.map((r) => r.statusCode)), new Set([401]))
    assert.equal(lookups.keys, 1)
    // Not cached: a later request asks again (a key created meanwhile must work).
    await t.app.inject({ url: '/v1/pets', remoteAddress: '10.9.1.99', headers: madeUp })
    assert.equal(lookups.keys, 2)

    const key = bearer(await t.key({ plan: 'pro' }))
    const valid = await Promise.all(Array.from({ length: 20 }, () => t.app.inject({ url: '/v1/pets', headers: key })))
    assert.deepEqual(new Set(valid.map((r) => r.statusCode)), new Set([200]))
    assert.equal(lookups.keys, 3)
  })

  test('a valid admin token is read from storage once', async (context) => {
    const storage = memoryStorage()
    const lookups = countLookups(storage)
    const t = await buildTestApp(context, { storage })
    const admin = await t.admin()
    const { token } = await createAdminToken(storage.adminTokens, 'ops')
    for (let i = 0; i < 20; i++) {
      const res = await admin.inject({ url: '/admin/v1/keys', headers: { authorization: `Bearer ${token}` } })
      assert.equal(res.statusCode, 200)
    }
    assert.equal(lookups.adminTokens, 1)
  })

  test('a key created by another instance works at once, also after this one found it unknown', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'animal-store-lookups-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const file = join(dir, 'store.db')
    const other = new SqliteStorage({ databaseUrl: file, durability: 'process' })
    t.after(() => other.close())
    const app = await buildTestApp(t, { storage: new SqliteStorage({ databaseUrl: file, durability: 'process' }) })
    const { key, record } = newKey({ plan: 'free', name: 'new' }, 'production', TEST_NOW)
    assert.equal((await app.app.inject({ url: '/v1/pets', headers: bearer(key) })).statusCode, 401)
    await other.keys.insertKey(record)
    assert.equal((await app.app.inject({ url: '/v1/pets', headers: bearer(key) })).statusCode, 200)
  })

  test('an admin token revoked by another process is refused once the change log is read', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'animal-store-lookups-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const file = join(dir, 'store.db')
    // `other` is the CLI's connection: `admin-tokens revoke` runs revokeAdminToken on it.
    const other = new SqliteStorage({ databaseUrl: file, durability: 'process' })
    t.after(() => other.close())
    const app = await buildTestApp(t, { storage: new SqliteStorage({ databaseUrl: file, durability: 'process' }) })
    const admin = await app.admin()
    const { token, record } = await createAdminToken(other.adminTokens, 'ops')
    const call = () => admin.inject({ url: '/admin/v1/keys', headers: { authorization: `Bearer ${token}` } })
    assert.equal((await call()).statusCode, 200)
    await other.adminTokens.revoke(record.id, Date.now())
    await app.domain.keyResolver.refresh()
    const res = await call()
    assert.equal(res.statusCode, 401)
    assert.equal(res.json().message, 'Invalid or revoked admin token')
  })
})
