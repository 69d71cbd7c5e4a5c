/**
 * A valid key or admin token from a refused address (issue 28, item 3, second part): the filter of
 * known secrets (keys/known-secrets.ts) lets a secret that exists be looked up whatever its
 * address, so it is judged by its own plan, while made-up ones from a refused address still cost
 * no lookup. Lookups are counted with a wrapper around the store, as in anonymous-lookups.test.ts.
 * Each app polls the change log every 60 s here (KEY_REFRESH_MS): a test reads it by calling
 * refresh(), so that the window before a poll is not left to the timer.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import type { ChangeContext } from '../../src/changes/audit-log.js'
import { ChangeRecorder } from '../../src/changes/change-recorder.js'
import { generateAdminToken, generateKey } from '../../src/keys/api-key.js'
import { KeyService } from '../../src/keys/key-service.js'
import { systemClock } from '../../src/shared/clock.js'
import { ADMIN_QUOTA, ANONYMOUS_QUOTA, PLAN_QUOTAS } from '../../src/shared/plans.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { bearer, buildTestApp, memoryStorage, type TestApp } from '../helpers/app.js'
import { createApiKey } from '../helpers/keys.js'

const CLI: ChangeContext = { actor: { type: 'cli', id: 'tester' } }
const SLOW_POLL = { KEY_REFRESH_MS: '60000' }

/** Counts the store's lookups of presented secrets. */
function countLookups(storage: Storage): { keys: number; adminTokens: number } {
  const counts = { keys: 0, adminTokens: 0 }
  const findKey = storage.keys.findKeyByHash.bind(storage.keys)
  storage.keys.findKeyByHash = (hash) => {
    counts.keys++
    return findKey(hash)
  }
  const findToken = storage.adminTokens.findByHash.bind(storage.adminTokens)
  storage.adminTokens.findByHash = (hash) => {
    counts.adminTokens++
    return findToken(hash)
  }
  return counts
}

/** Sends keyless requests from `address` until it is banned (checked), as a guesser behind it would. */
async function ban(app: FastifyInstance, address: string, url = '/v1/pets'): Promise<void> {
  let last = ''
  for (let i = 0; i < ANONYMOUS_QUOTA.perMinute * 2 + 1; i++) last = (await app.inject({ url, remoteAddress: address })).json().code
  assert.equal(last, 'key_banned', `${address} is banned`)
}

/**
 * A store in a file, opened twice: once for the app, once for "another process" (another server,
 * or the CLI), which does `before` before the app starts.
 */
async function sharedFile(
  t: TestContext,
  before?: (other: Storage) => Promise<void>,
): Promise<{ app: TestApp; other: SqliteStorage; lookups: { keys: number; adminTokens: number } }> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-known-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'store.db')
  const other = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  t.after(() => other.close())
  await before?.(other)
  const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
  const lookups = countLookups(storage)
  const app = await buildTestApp(t, { storage, env: SLOW_POLL })
  return { app, other, lookups }
}

describe('a valid secret from a refused address is judged by its own plan', () => {
  test('a key this instance has not cached (the first request after a start, or after a change): 200, by its plan', async (t) => {
    const storage = memoryStorage()
    // Created before the start: the instance has never seen it, as after a restart.
    const { key, record } = await createApiKey(storage.keys, { plan: 'pro', name: 'customer' }, 'production')
    const lookups = countLookups(storage)
    const app = await buildTestApp(t, { storage, env: SLOW_POLL })
    await ban(app.app, '10.8.0.1')

    const first = await app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.1', headers: bearer(key) })
    assert.equal(first.statusCode, 200, 'the key is looked up although its address is banned')
    assert.equal(first.headers['x-ratelimit-limit'], String(PLAN_QUOTAS.pro.perMinute), 'and limited by its plan')
    assert.equal(lookups.keys, 1)

    // A change drops the key from the cache: looked up again, and judged by its new plan.
    await app.domain.services.keys.updateKey(record.id, { plan: 'business' }, CLI)
    const changed = await app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.1', headers: bearer(key) })
    assert.equal(changed.statusCode, 200)
    assert.equal(changed.headers['x-ratelimit-limit'], String(PLAN_QUOTAS.business.perMinute))
    assert.equal(lookups.keys, 2)

    // Made-up keys from the same address: still refused without a lookup.
    for (let i = 0; i < 100; i++) {
      const guess = await app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.1', headers: bearer(generateKey('production')) })
      assert.equal(guess.json().code, 'key_banned')
    }
    assert.equal(lookups.keys, 2, 'no lookup for a made-up key')
  })

  test('a key created and rotated here is known at once; its successor from a refused address is 200', async (t) => {
    const storage = memoryStorage()
    const lookups = countLookups(storage)
    const app = await buildTestApp(t, { storage, env: SLOW_POLL })
    await ban(app.app, '10.8.0.2')
    const created = await app.domain.services.keys.createKey({ plan: 'pro', name: 'new' }, CLI)
    const from = (key: string) => app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.2', headers: bearer(key) })
    assert.equal((await from(created.key)).statusCode, 200)
    const rotated = await app.domain.services.keys.rotateKey(created.view.id, { graceSeconds: 60 }, CLI)
    const successor = await from(rotated.key)
    assert.equal(successor.statusCode, 200)
    assert.equal(successor.headers['x-ratelimit-limit'], String(PLAN_QUOTAS.pro.perMinute))
    assert.equal(lookups.keys, 2, 'each looked up once')
  })

  test('a key created by another process (the CLI): known once this instance reads the change log', async (t) => {
    const { app, other, lookups } = await sharedFile(t)
    await ban(app.app, '10.8.0.3')
    const cli = new KeyService({
      keys: other.keys,
      recorder: new ChangeRecorder(other.audit, systemClock),
      limiter: { peek: () => Promise.reject(new Error('no limiter')) },
      env: 'production',
    })
    const { key, view } = await cli.createKey({ plan: 'pro', name: 'from the CLI' }, CLI)
    const from = (secret: string) => app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.3', headers: bearer(secret) })

    // The window: until the change log is read here, it cannot be told from a guess.
    assert.equal((await from(key)).json().code, 'key_banned')
    assert.equal(lookups.keys, 0)
    await app.domain.keyResolver.refresh()
    const known = await from(key)
    assert.equal(known.statusCode, 200)
    assert.equal(known.headers['x-ratelimit-limit'], String(PLAN_QUOTAS.pro.perMinute))
    assert.equal(lookups.keys, 1)

    // Its rotation there: the successor too, once the change log is read.
    const rotated = await cli.rotateKey(view.id, { graceSeconds: 60 }, CLI)
    await app.domain.keyResolver.refresh()
    assert.equal((await from(rotated.key)).statusCode, 200)
  })

  test('a key created by another server on the same store: known after its change-log poll', async (t) => {
    const { app, other } = await sharedFile(t)
    const second = await buildTestApp(t, { storage: other, env: SLOW_POLL })
    await ban(app.app, '10.8.0.4')
    const { key } = await second.domain.services.keys.createKey({ plan: 'business', name: 'made over there' }, CLI)
    assert.equal(
      (await second.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.4', headers: bearer(key) })).statusCode,
      200,
      'there at once',
    )
    await app.domain.keyResolver.refresh()
    const here = await app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.4', headers: bearer(key) })
    assert.equal(here.statusCode, 200)
    assert.equal(here.headers['x-ratelimit-limit'], String(PLAN_QUOTAS.business.perMinute))
  })

  test('a revoked key from a refused address costs one lookup, not one per request', async (t) => {
    const storage = memoryStorage()
    const { key, record } = await createApiKey(storage.keys, { plan: 'pro', name: 'leaked' }, 'production')
    await storage.keys.revokeKey(record.id, Date.now())
    const lookups = countLookups(storage)
    const app = await buildTestApp(t, { storage, env: SLOW_POLL })
    await ban(app.app, '10.8.0.5')
    for (let i = 0; i < 50; i++) {
      const res = await app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.5', headers: bearer(key) })
      assert.equal(res.json().code, 'key_banned')
    }
    assert.equal(lookups.keys, 1, 'found revoked once, then refused as a guess')
    // From an address that is allowed it is looked up as before, and refused as revoked.
    const allowed = await app.app.inject({ url: '/v1/pets', remoteAddress: '10.8.0.6', headers: bearer(key) })
    assert.equal(allowed.json().message, 'Invalid or revoked API key')
  })
})

describe('a valid admin token from a refused address, on the admin listener', () => {
  test('one that existed at the start, and one the CLI created since (once the change log is read): 200', async (t) => {
    let existing = ''
    const { app, other, lookups } = await sharedFile(t, async (store) => {
      existing = (await createAdminToken(store.adminTokens, 'before the start')).token
    })
    const admin = await app.admin()
    await ban(admin, '10.8.1.1', '/admin/v1/keys')
    const call = (token: string) => admin.inject({ url: '/admin/v1/keys', remoteAddress: '10.8.1.1', headers: bearer(token) })

    const first = await call(existing)
    assert.equal(first.statusCode, 200, 'looked up although its address is banned')
    assert.equal(first.headers['x-ratelimit-limit'], String(ADMIN_QUOTA.perMinute), 'and limited by the admin quota')
    assert.equal(lookups.adminTokens, 1)

    const { token } = await createAdminToken(other.adminTokens, 'by the CLI')
    assert.equal((await call(token)).json().code, 'key_banned', 'not known here until the change log is read')
    assert.equal(lookups.adminTokens, 1)
    await app.domain.keyResolver.refresh()
    assert.equal((await call(token)).statusCode, 200)
    assert.equal(lookups.adminTokens, 2)

    for (let i = 0; i < 50; i++) assert.equal((await call(generateAdminToken())).json().code, 'key_banned')
    assert.equal(lookups.adminTokens, 2, 'no lookup for a made-up token')
  })
})
