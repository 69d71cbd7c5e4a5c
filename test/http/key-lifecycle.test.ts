/**
 * The key lifecycle as a client sees it, through app.inject on a manual clock: expiry, rotation
 * with a shared quota, plan changes and revocation after the cache refresh, usage equal to the
 * headers, and last-used batching.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import type { ChangeContext } from '../../src/changes/audit-log.js'
import { ChangeRecorder } from '../../src/changes/change-recorder.js'
import { KeyService } from '../../src/keys/key-service.js'
import type { ManualClock } from '../../src/shared/clock.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { bearer, buildTestApp, TEST_NOW, type TestApp } from '../helpers/app.js'

const CLI: ChangeContext = { actor: { type: 'cli', id: 'tester' } }

const get = (t: TestApp, key: string) => t.app.inject({ url: '/v1/pets', headers: bearer(key) })
const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining'])

test('an expired key is 401 key_expired, limited per address like any invalid key; unexpired keys are untouched', async (context) => {
  const t = await buildTestApp(context)
  const clock = t.clock as ManualClock
  const { key } = await t.domain.services.keys.createKey({ plan: 'pro', name: 'temp', expiresAt: TEST_NOW + 10_000 }, CLI)
  const { key: other } = await t.domain.services.keys.createKey({ plan: 'pro', name: 'forever' }, CLI)
  assert.equal((await get(t, key)).statusCode, 200)
  clock.advance(9_999)
  assert.equal((await get(t, key)).statusCode, 200, 'still valid 1 ms before')
  clock.advance(1)
  const res = await get(t, key)
  assert.equal(res.statusCode, 401)
  assert.deepEqual(res.json(), {
    code: 'key_expired',
    message: `This API key expired at ${new Date(TEST_NOW + 10_000).toISOString()}`,
    status: 401,
  })
  assert.match(String(res.headers['www-authenticate']), /^Bearer .*error="invalid_token"/)
  assert.equal(res.headers['x-ratelimit-limit'], '60', 'limited per address at the Free rate, not by the key')
  assert.equal((await get(t, other)).statusCode, 200)
  // Extending the expiry brings it back (after the cache refresh).
  await t.domain.services.keys.updateKey(
    (await t.domain.services.keys.listKeys({ limit: 10, state: 'expired' })).keys[0]!.id,
    { expiresAt: TEST_NOW + 60_000 },
    CLI,
  )
  await t.domain.keyResolver.refresh()
  assert.equal((await get(t, key)).statusCode, 200)
})

test('a rotated key works during its grace period and shares one quota with its successor; then 401 key_expired', async (context) => {
  const t = await buildTestApp(context)
  const clock = t.clock as ManualClock
  const { key: oldKey, view } = await t.domain.services.keys.createKey({ plan: 'free', name: 'customer' }, CLI)
  assert.equal(remaining(await get(t, oldKey)), 59)
  const rotated = await t.domain.services.keys.rotateKey(view.id, { graceSeconds: 20 }, CLI)
  await t.domain.keyResolver.refresh()
  // One quota: the count goes on across both keys, it does not start over for the new one.
  assert.equal(remaining(await get(t, rotated.key)), 58)
  assert.equal(remaining(await get(t, oldKey)), 57)
  assert.equal(remaining(await get(t, rotated.key)), 56)
  const usage = await t.domain.services.keys.keyUsage(rotated.view.id)
  assert.deepEqual([usage.quotaId, usage.minute.used, usage.minute.remaining], [view.id, 4, 56])
  assert.deepEqual((await t.domain.services.keys.keyUsage(view.id)).minute, usage.minute, 'the same quota seen from the old key')

  clock.advance(20_000)
  const expired = await get(t, oldKey)
  assert.equal(expired.statusCode, 401)
  assert.equal(expired.json().code, 'key_expired')
  assert.equal(remaining(await get(t, rotated.key)), 55, 'the successor keeps the quota (same minute)')

  // Grace 0: the old key is revoked at once (unauthorized, as any revoked key).
  const again = await t.domain.services.keys.rotateKey(rotated.view.id, { graceSeconds: 0 }, CLI)
  await t.domain.keyResolver.refresh()
  const revoked = await get(t, rotated.key)
  assert.equal(revoked.statusCode, 401)
  assert.equal(revoked.json().code, 'unauthorized')
  assert.equal((await get(t, again.key)).statusCode, 200)
})

test('a plan update made by another process takes effect at the cache refresh; a revocation likewise', async (context) => {
  const t = await buildTestApp(context)
  // The CLI, or another instance: its own key service on the same store.
  const elsewhere = new KeyService({
    keys: t.storage.keys,
    recorder: new ChangeRecorder(t.storage.audit, t.clock),
    limiter: t.limiter,
    env: t.config.env,
    clock: t.clock,
  })
  const { key, view } = await elsewhere.createKey({ plan: 'free', name: 'upgrade me' }, CLI)
  assert.equal((await get(t, key)).headers['x-ratelimit-limit'], '60')
  await elsewhere.updateKey(view.id, { plan: 'enterprise', perMinute: 5000, perDay: 50_000 }, CLI)
  assert.equal((await get(t, key)).headers['x-ratelimit-limit'], '60', 'cached until the change log is read')
  await t.domain.keyResolver.refresh()
  const upgraded = await get(t, key)
  assert.equal(upgraded.headers['x-ratelimit-limit'], '5000')
  assert.equal(remaining(upgraded), 4997, 'the same quota: its counts go on under the new limits')
  await elsewhere.updateKey(view.id, { plan: 'free' }, CLI)
  await t.domain.keyResolver.refresh()
  assert.equal((await get(t, key)).headers['x-ratelimit-limit'], '60')

  await elsewhere.revokeKey(view.id, CLI)
  assert.equal((await get(t, key)).statusCode, 200, 'cached until the change log is read')
  await t.domain.keyResolver.refresh()
  const res = await get(t, key)
  assert.equal(res.statusCode, 401)
  assert.equal(res.json().code, 'unauthorized')
})

test("a key changed through this instance's admin API is refused or re-planned at once here, not at the next poll", async (t) => {
  // The poll of the change log effectively off: only the key service's own word can drop the keys.
  const service = await buildTestApp(t, { env: { KEY_REFRESH_MS: '60000', ADMIN_PORT: '8081' } })
  // The public API, and the admin API on an app of its own, over the same domain.
  const { app: main, storage, domain } = service
  const admin = await service.admin()
  const { token } = await createAdminToken(storage.adminTokens, 'operator')
  const adminCall = (method: 'POST' | 'PATCH', url: string, body: object) =>
    admin.inject({ method, url: `/admin/v1/keys/${url}`, headers: bearer(token), payload: body })
  const call = (key: string) => main.inject({ url: '/v1/pets', headers: bearer(key) })
  const create = (name: string) => domain.services.keys.createKey({ plan: 'free', name }, CLI)
  const [revoked, rotated, upgraded] = [await create('revoked'), await create('rotated'), await create('upgraded')]
  for (const { key } of [revoked, rotated, upgraded]) assert.equal((await call(key)).statusCode, 200, 'cached by the first request')

  assert.equal((await adminCall('POST', `${revoked.view.id}/revoke`, {})).statusCode, 200)
  const afterRevoke = await call(revoked.key)
  assert.equal(afterRevoke.statusCode, 401, 'revoked: refused at once')
  assert.equal(afterRevoke.json().code, 'unauthorized')

  const rotation = await adminCall('POST', `${rotated.view.id}/rotate`, { gracePeriodSeconds: 0 })
  assert.equal(rotation.statusCode, 201)
  assert.equal((await call(rotated.key)).statusCode, 401, 'rotated without grace: refused at once')
  assert.equal((await call(rotation.json().key)).statusCode, 200, 'its successor works')

  assert.equal((await adminCall('PATCH', upgraded.view.id, { plan: 'pro' })).statusCode, 200)
  assert.equal((await call(upgraded.key)).headers['x-ratelimit-limit'], '300', "the new plan's limit at once")
})

test('usage shows the numbers the rate-limit headers of the last request showed, without counting', async (context) => {
  const t = await buildTestApp(context, { env: { BAN_THRESHOLD: '2', BAN_BASE_SECONDS: '60' } })
  const clock = t.clock as ManualClock
  const { key, view } = await t.domain.services.keys.createKey({ plan: 'enterprise', name: 'small', perMinute: 3, perDay: 100 }, CLI)
  let last = await get(t, key)
  for (let i = 0; i < 2; i++) last = await get(t, key)
  const usage = await t.domain.services.keys.keyUsage(view.id)
  assert.equal(usage.minute.remaining, remaining(last))
  assert.equal(usage.minute.resetAt, Number(last.headers['x-ratelimit-reset']))
  assert.equal(
    // Without the partition key (pk: test/auth/guard.test.ts).
    String(last.headers.ratelimit).replaceAll(/;pk=:[A-Za-z0-9+/=]*:/g, ''),
    `"minute";r=${usage.minute.remaining};t=${usage.minute.resetAt - Math.floor(clock.now() / 1000)}, "day";r=${usage.day.remaining};t=${usage.day.resetAt - Math.floor(clock.now() / 1000)}`,
  )
  assert.deepEqual([usage.minute.used, usage.day.used, usage.day.limit], [3, 3, 100])
  assert.deepEqual(await t.domain.services.keys.keyUsage(view.id), usage, 'peeking counts nothing')
  assert.equal(usage.lastUsedAt, TEST_NOW, 'pending, not yet flushed')

  // Two refusals start a ban: usage shows it with its level.
  assert.equal((await get(t, key)).statusCode, 429)
  const banned = await get(t, key)
  assert.equal(banned.json().code, 'key_banned')
  const during = await t.domain.services.keys.keyUsage(view.id)
  assert.deepEqual(during.ban, { active: true, until: Math.ceil(TEST_NOW / 1000) + 60, level: 1 })
  clock.advance(60_000)
  const next = await t.domain.services.keys.keyUsage(view.id)
  assert.deepEqual([next.minute.used, next.ban.active, next.ban.level], [0, false, 1], 'a new minute reads as 0 used')
})

test('last use is kept in memory per request and written in batches, and on close', async (context) => {
  const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
  let batches = 0
  const recordLastUsed = storage.keys.recordLastUsed.bind(storage.keys)
  storage.keys.recordLastUsed = async (times) => {
    batches++
    await recordLastUsed(times)
  }
  const t = await buildTestApp(context, { storage, env: { LAST_USED_FLUSH_MS: '600000' } })
  const clock = t.clock as ManualClock
  const views = []
  for (let i = 0; i < 3; i++) {
    const created = await t.domain.services.keys.createKey({ plan: 'free', name: `k${i}` }, CLI)
    views.push(created.view)
    clock.advance(1000)
    for (let j = 0; j < 5; j++) assert.equal((await get(t, created.key)).statusCode, 200)
  }
  assert.equal(batches, 0, 'no write per request')
  for (const v of views) assert.equal((await storage.keys.findKeyById(v.id))?.lastUsedAt, null)
  assert.equal((await t.domain.services.keys.getKey(views[2]!.id)).lastUsedAt, TEST_NOW + 3000, 'pending shows at once')
  await t.domain.recorders.lastUsed.flush()
  assert.equal(batches, 1, 'one batch for every key')
  for (const [i, v] of views.entries()) assert.equal((await storage.keys.findKeyById(v.id))?.lastUsedAt, TEST_NOW + (i + 1) * 1000)
  await t.domain.recorders.lastUsed.flush()
  assert.equal(batches, 1, 'nothing pending, nothing written')

  clock.advance(5000)
  const { key } = await t.domain.services.keys.createKey({ plan: 'free', name: 'late' }, CLI)
  await get(t, key)
  // What the service's close does before storage closes.
  await t.domain.jobs.daemon.stop()
  assert.equal(batches, 2, 'the pending batch is written on close')
  const late = (await storage.keys.listKeys()).find((k) => k.name === 'late')
  assert.equal(late?.lastUsedAt, TEST_NOW + 8000)
})
