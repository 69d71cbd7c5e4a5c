/**
 * The key service on both stores: the same assertions on SQLite and on PostgreSQL.
 */
import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import type { AuditRepository, ChangeContext } from '../../src/changes/audit-log.js'
import { ChangeRecorder } from '../../src/changes/change-recorder.js'
import { MAX_METADATA_BYTES } from '../../src/keys/administration.js'
import { type ApiKeyRecord, hashKey, limiterIdentity } from '../../src/keys/api-key.js'
import { createFirstKey, KeyService } from '../../src/keys/key-service.js'
import { MemoryLimiter } from '../../src/limits/memory/memory-limiter.js'
import { ManualClock } from '../../src/shared/clock.js'
import { Refusal } from '../../src/shared/refusal.js'
import type { Storage } from '../../src/storage/storage.js'
import { TEST_NOW } from '../helpers/app.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const CLI: ChangeContext = { actor: { type: 'cli', id: 'tester' } }
const ADMIN: ChangeContext = { actor: { type: 'admin_token', id: 'adm_1' }, requestId: 'req-1' }
/** An unknown key: a `not_found` refusal. */
const NOT_FOUND = { name: 'Refusal', kind: 'not_found' }
const POLICY = { threshold: 0, baseSeconds: 60, maxSeconds: 3600 }

interface Harness {
  storage: Storage
  service: KeyService
  clock: ManualClock
  limiter: MemoryLimiter
  pending: Map<string, number>
  /** What the service told its key cache to forget, in order, with the stored key read at that moment. */
  forgotten: Array<{ hash: string; stored: Promise<ApiKeyRecord | undefined> }>
  /** The keys it told its key cache it created, in order, with the stored key read at that moment. */
  created: Array<{ hash: string; stored: Promise<ApiKeyRecord | undefined> }>
}

/** `log`: where the service's changes that have no row of their own (and its reads) are written; the store's audit log by default. */
async function harness(
  t: TestContext,
  open: (t: TestContext) => Promise<Storage | undefined>,
  log?: (storage: Storage) => Pick<AuditRepository, 'write'>,
): Promise<Harness | undefined> {
  const storage = await open(t)
  if (!storage) return undefined
  const clock = new ManualClock(TEST_NOW)
  const limiter = new MemoryLimiter(clock, POLICY)
  t.after(() => limiter.close())
  const pending = new Map<string, number>()
  const forgotten: Harness['forgotten'] = []
  const created: Harness['created'] = []
  const service = new KeyService({
    keys: storage.keys,
    recorder: new ChangeRecorder(log?.(storage) ?? storage.audit, clock),
    limiter,
    env: 'production',
    clock,
    pendingLastUse: (id) => pending.get(id),
    cache: {
      forget: (hash) => forgotten.push({ hash, stored: storedNow(storage, hash) }),
      created: (hash) => created.push({ hash, stored: storedNow(storage, hash) }),
    },
  })
  return { storage, service, clock, limiter, pending, forgotten, created }
}

/** The stored key, read now; most tests never await it, so a store closed before it answers must not fail them. */
function storedNow(storage: Storage, hash: string): Promise<ApiKeyRecord | undefined> {
  const stored = storage.keys.findKeyByHash(hash)
  stored.catch(() => {})
  return stored
}

/** A change the key's state does not allow: a `conflict` refusal naming the key (the admin API's 409). */
async function conflicts(promise: Promise<unknown>, id: string, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof Refusal && error.kind === 'conflict', `a conflict, got ${String(error)}`)
    assert.ok(error.message.startsWith(`key ${id} `), error.message)
    assert.match(error.message, message)
    return true
  })
}

/** Asserts an `invalid` refusal naming `field`, with the message starting with it. */
async function rejectsField(promise: Promise<unknown>, field: string, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof Refusal && error.kind === 'invalid', `an invalid refusal, got ${String(error)}`)
    assert.equal(error.field, field)
    assert.ok(error.message.startsWith(field), `the message starts with ${field}: ${error.message}`)
    if (message) assert.match(error.message, message)
    return true
  })
}

for (const engine of STORE_ENGINES) {
  describe(`key service: ${engine.name}`, () => {
    test('create: a view without secrets, the key once, an audit entry; bad input names the field and writes nothing', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const { key, view } = await h.service.createKey(
        { plan: 'pro', name: '  Acme  ', expiresAt: TEST_NOW + 86_400_000, metadata: { customer: 'c_42', tags: ['a'] } },
        ADMIN,
      )
      assert.match(key, /^as_live_/)
      assert.deepEqual(view, {
        id: view.id,
        name: 'Acme',
        plan: 'pro',
        perMinute: 300,
        perDay: 10_000,
        prefix: key.slice(0, 12),
        quotaId: view.id,
        customerId: null,
        scopes: ['pets:read', 'pets:write', 'orders:read', 'orders:write'],
        state: 'active',
        createdAt: TEST_NOW,
        updatedAt: TEST_NOW,
        expiresAt: TEST_NOW + 86_400_000,
        revokedAt: null,
        rotatedTo: null,
        rotatedFrom: null,
        metadata: { customer: 'c_42', tags: ['a'] },
        lastUsedAt: null,
      })
      assert.equal((await h.storage.keys.findKeyByHash(hashKey(key)))?.id, view.id)
      const audit = await h.storage.audit.list({ limit: 10 })
      assert.equal(audit.entries.length, 1)
      assert.deepEqual(
        { ...audit.entries[0], seq: 0 },
        {
          seq: 0,
          at: TEST_NOW,
          actor: { type: 'admin_token', id: 'adm_1' },
          action: 'key.create',
          keyId: view.id,
          details: { name: 'Acme', plan: 'pro', perMinute: 300, perDay: 10_000, expiresAt: TEST_NOW + 86_400_000 },
          requestId: 'req-1',
        },
      )
      assert.ok(!JSON.stringify(audit).includes(key.slice(8)), 'no secret in the audit log')

      const enterprise = await h.service.createKey({ plan: 'enterprise', name: 'big', perMinute: 5000, perDay: 1_000_000 }, CLI)
      assert.deepEqual([enterprise.view.perMinute, enterprise.view.perDay], [5000, 1_000_000])

      await rejectsField(
        h.service.createKey({ plan: 'gold', name: 'a' }, CLI),
        'plan',
        /^plan must be one of free, pro, business, enterprise/,
      )
      await rejectsField(h.service.createKey({ plan: 'free', name: ' ' }, CLI), 'name')
      await rejectsField(h.service.createKey({ plan: 'free', name: 'x'.repeat(101) }, CLI), 'name')
      await rejectsField(h.service.createKey({ plan: 'free', name: 'a', perMinute: 10 }, CLI), 'perMinute', /enterprise plan only/)
      await rejectsField(h.service.createKey({ plan: 'pro', name: 'a', perDay: 10 }, CLI), 'perDay', /enterprise plan only/)
      await rejectsField(h.service.createKey({ plan: 'enterprise', name: 'a', perMinute: 10 }, CLI), 'perDay', /needs both/)
      await rejectsField(h.service.createKey({ plan: 'enterprise', name: 'a', perMinute: 0, perDay: 5 }, CLI), 'perMinute')
      await rejectsField(h.service.createKey({ plan: 'free', name: 'a', expiresAt: TEST_NOW }, CLI), 'expiresAt', /in the future/)
      await rejectsField(h.service.createKey({ plan: 'free', name: 'a', expiresAt: TEST_NOW - 1 }, CLI), 'expiresAt', /in the future/)
      await rejectsField(h.service.createKey({ plan: 'free', name: 'a', metadata: [1] as never }, CLI), 'metadata', /JSON object/)
      const big = { blob: 'x'.repeat(MAX_METADATA_BYTES) }
      await rejectsField(h.service.createKey({ plan: 'free', name: 'a', metadata: big }, CLI), 'metadata', /at most 4096 bytes/)
      // Exactly at the bound is fine (bytes of UTF-8 JSON).
      const exact = { b: 'x'.repeat(MAX_METADATA_BYTES - '{"b":""}'.length) }
      await h.service.createKey({ plan: 'free', name: 'at the bound', metadata: exact }, CLI)
      assert.equal((await h.service.listKeys({ limit: 100 })).keys.length, 3, 'no key from bad input')
      assert.equal((await h.storage.audit.list({ limit: 100 })).entries.length, 3, 'no audit entry from bad input')
      await assert.rejects(h.service.getKey('key_nope'), NOT_FOUND)
    })

    test('text the CLI passes straight through: a NUL in metadata, a hidden character in a name, refused naming the field; nothing stored', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const { view } = await h.service.createKey({ plan: 'free', name: 'kept', metadata: { customer: 'c1' } }, CLI)
      const refusals: Array<[() => Promise<unknown>, string, RegExp]> = [
        [
          () => h.service.createKey({ plan: 'free', name: 'a', metadata: { customer: 'c\u0000' } }, CLI),
          'metadata',
          /^metadata\.customer must not contain U\+0000 \(NUL\)$/,
        ],
        [
          () => h.service.createKey({ plan: 'free', name: 'a', metadata: { deep: [{ 'k\u0000': 1 }] } }, CLI),
          'metadata',
          /^metadata\.deep\.0 must not have a field name containing U\+0000 \(NUL\)$/,
        ],
        [
          () => h.service.updateKey(view.id, { metadata: { '\u0000': 'x' } }, CLI),
          'metadata',
          /^metadata must not have a field name containing U\+0000/,
        ],
        [
          () => h.service.createKey({ plan: 'free', name: '\u202eevil' }, CLI),
          'name',
          /^name must not contain U\+202E \(no text-direction or invisible characters\)$/,
        ],
        [() => h.service.updateKey(view.id, { name: 'a\u2066b' }, CLI), 'name', /^name must not contain U\+2066 /],
        [() => h.service.updateKey(view.id, { name: 'zero\u200bwidth' }, CLI), 'name', /^name must not contain U\+200B /],
        // Before trimming: a byte order mark is white space to String.prototype.trim.
        [() => h.service.createKey({ plan: 'free', name: '\ufeffbom' }, CLI), 'name', /^name must not contain U\+FEFF /],
      ]
      for (const [call, field, message] of refusals) await rejectsField(call(), field, message)
      const keys = await h.service.listKeys({ limit: 100 })
      assert.deepEqual(
        keys.keys.map((k) => [k.name, k.metadata]),
        [['kept', { customer: 'c1' }]],
      )
      assert.equal((await h.storage.audit.list({ limit: 100 })).entries.length, 1, 'no audit entry from bad input')
    })

    test('the first key of a start is in the audit log, by system/bootstrap, written with the key; a later start adds neither', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const first = await createFirstKey(h.storage.keys, 'production', TEST_NOW)
      assert.ok(first, 'created on an empty store')
      assert.equal(await createFirstKey(h.storage.keys, 'production', TEST_NOW + 1000), undefined, 'not once a key exists')
      const { entries } = await h.storage.audit.list({ limit: 100 })
      assert.deepEqual(
        entries.map(({ seq, ...entry }) => entry),
        [
          {
            at: TEST_NOW,
            actor: { type: 'system', id: 'bootstrap' },
            action: 'key.create',
            keyId: first.record.id,
            details: { name: 'first key', plan: 'free', perMinute: 60, perDay: 1000, expiresAt: null },
            requestId: null,
          },
        ],
      )
      assert.ok(!JSON.stringify(entries).includes(first.key.slice(8)), 'no secret in the audit log')
    })

    test('list: newest first, paged, filtered by plan, state and name in storage', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const made = []
      for (let i = 0; i < 7; i++) {
        const plan = i % 2 === 0 ? 'free' : 'pro'
        made.push((await h.service.createKey({ plan, name: `Customer ${i}`, expiresAt: i === 5 ? TEST_NOW + 10_000 : null }, CLI)).view)
        h.clock.advance(1) // one creation time each: the list's order is theirs
      }
      await h.service.revokeKey(made[6]!.id, CLI)
      h.clock.advance(20_000) // key 5 expires
      const ids = made.map((k) => k.id).reverse()
      const seen: string[] = []
      let after: string | undefined
      for (let pages = 0; pages < 10; pages++) {
        const page = await h.service.listKeys({ limit: 3, after })
        seen.push(...page.keys.map((k) => k.id))
        if (page.nextAfter === null) break
        after = page.nextAfter
      }
      assert.deepEqual(seen, ids, 'every key once, newest first')
      const byState = async (state: 'active' | 'expired' | 'revoked') =>
        (await h.service.listKeys({ limit: 100, state })).keys.map((k) => k.name).sort()
      assert.deepEqual(await byState('expired'), ['Customer 5'])
      assert.deepEqual(await byState('revoked'), ['Customer 6'])
      assert.deepEqual(await byState('active'), ['Customer 0', 'Customer 1', 'Customer 2', 'Customer 3', 'Customer 4'])
      assert.deepEqual((await h.service.listKeys({ limit: 100, plan: 'pro' })).keys.map((k) => k.name).sort(), [
        'Customer 1',
        'Customer 3',
        'Customer 5',
      ])
      assert.deepEqual(
        (await h.service.listKeys({ limit: 100, name: 'TOMER 4' })).keys.map((k) => k.name),
        ['Customer 4'],
      )
      assert.deepEqual((await h.service.listKeys({ limit: 100, name: '%' })).keys, [], 'no wildcard')
      assert.deepEqual((await h.service.listKeys({ limit: 100, plan: 'free', state: 'active' })).keys.length, 3)
      await rejectsField(h.service.listKeys({ limit: 0 }), 'limit')
      await rejectsField(h.service.listKeys({ limit: 101 }), 'limit')
      await rejectsField(h.service.listKeys({ limit: 10, state: 'sleeping' as never }), 'state')
      await rejectsField(h.service.listKeys({ limit: 10, plan: 'gold' as never }), 'plan')
    })

    test('update: fields, plan rules, a change-log entry and an audit entry; revoked keys refuse', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const { key, view } = await h.service.createKey({ plan: 'pro', name: 'a', metadata: { x: 1 } }, CLI)
      const cursor = (await h.storage.keys.changesSince(null)).cursor
      h.clock.advance(1000)
      const renamed = await h.service.updateKey(view.id, { name: 'b', metadata: null, expiresAt: TEST_NOW + 3_600_000 }, ADMIN)
      assert.deepEqual(
        [renamed.name, renamed.metadata, renamed.expiresAt, renamed.updatedAt],
        ['b', null, TEST_NOW + 3_600_000, TEST_NOW + 1000],
      )
      assert.deepEqual((await h.storage.keys.changesSince(cursor)).hashes, [hashKey(key)], 'the change is logged for the caches')

      await rejectsField(h.service.updateKey(view.id, { plan: 'enterprise' }, CLI), 'perMinute', /needs both/)
      await rejectsField(h.service.updateKey(view.id, { perMinute: 5 }, CLI), 'perMinute', /enterprise plan only/)
      await rejectsField(h.service.updateKey(view.id, { expiresAt: TEST_NOW }, CLI), 'expiresAt')
      await rejectsField(h.service.updateKey(view.id, { plan: 'silver' }, CLI), 'plan')
      const big = await h.service.updateKey(view.id, { plan: 'enterprise', perMinute: 7, perDay: 70 }, CLI)
      assert.deepEqual([big.plan, big.perMinute, big.perDay], ['enterprise', 7, 70])
      const onlyDay = await h.service.updateKey(view.id, { perDay: 90 }, CLI)
      assert.deepEqual([onlyDay.perMinute, onlyDay.perDay], [7, 90], 'an enterprise key keeps the limit not given')
      const back = await h.service.updateKey(view.id, { plan: 'business' }, CLI)
      assert.deepEqual([back.plan, back.perMinute, back.perDay], ['business', 1000, 100_000], 'leaving enterprise resets the limits')
      const cleared = await h.service.updateKey(view.id, { expiresAt: null }, CLI)
      assert.equal(cleared.expiresAt, null)
      // The values it already has: nothing written to the key, but the call is on record.
      const cursorBefore = (await h.storage.keys.changesSince(null)).cursor
      const same = await h.service.updateKey(view.id, { name: 'b', plan: 'business' }, ADMIN)
      assert.equal(same.updatedAt, cleared.updatedAt, 'the key is not written')
      assert.deepEqual((await h.storage.keys.changesSince(cursorBefore)).hashes, [], 'nor the change log')

      const entries = (await h.storage.audit.list({ limit: 100, keyId: view.id })).entries
      assert.deepEqual(
        entries.map((e) => e.action),
        ['key.create', 'key.update', 'key.update', 'key.update', 'key.update', 'key.update', 'key.update'],
      )
      const first = entries[1]!
      assert.deepEqual(first.details.changed, ['name', 'expiresAt', 'metadata'])
      assert.equal(first.requestId, 'req-1')
      assert.deepEqual(entries.at(-1)!.details, {
        changed: [],
        name: 'b',
        plan: 'business',
        perMinute: 1000,
        perDay: 100_000,
        expiresAt: null,
      })
      assert.equal(entries.at(-1)!.requestId, 'req-1')

      await h.service.revokeKey(view.id, CLI)
      await conflicts(h.service.updateKey(view.id, { name: 'c' }, CLI), view.id, /is revoked/)
      await assert.rejects(h.service.updateKey('key_nope', { name: 'c' }, CLI), NOT_FOUND)
    })

    test('rotate: the successor keeps plan, limits, name, metadata and quota; the old key expires after the grace period', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const { key: oldKey, view: old } = await h.service.createKey(
        { plan: 'enterprise', name: 'acme', perMinute: 50, perDay: 500, metadata: { c: 1 } },
        CLI,
      )
      const cursor = (await h.storage.keys.changesSince(null)).cursor
      h.clock.advance(1000)
      const { key, view, previous } = await h.service.rotateKey(old.id, { graceSeconds: 3600 }, ADMIN)
      assert.notEqual(key, oldKey)
      assert.deepEqual(
        [view.plan, view.perMinute, view.perDay, view.name, view.metadata, view.quotaId, view.rotatedFrom, view.state],
        ['enterprise', 50, 500, 'acme', { c: 1 }, old.id, old.id, 'active'],
      )
      assert.deepEqual([previous.rotatedTo, previous.expiresAt, previous.state], [view.id, TEST_NOW + 1000 + 3_600_000, 'active'])
      assert.deepEqual(await h.service.getKey(old.id), previous)
      assert.deepEqual((await h.storage.keys.changesSince(cursor)).hashes, [hashKey(oldKey), hashKey(key)], 'the old key and its successor')
      assert.equal((await h.storage.keys.findKeyByHash(hashKey(key)))?.quotaId, old.id)

      // The limits follow the quota: a plan change on the successor reaches the old key in its grace period.
      await h.service.updateKey(view.id, { perMinute: 60, perDay: 600 }, CLI)
      assert.deepEqual([(await h.service.getKey(old.id)).perMinute, (await h.service.getKey(old.id)).perDay], [60, 600])
      // So do its scopes (an old key never does more than its successor): logged for the other
      // processes' caches, dropped from this one's once committed.
      const beforeScopes = (await h.storage.keys.changesSince(null)).cursor
      h.forgotten.length = 0
      await h.service.updateKey(view.id, { scopes: ['pets:read'] }, CLI)
      assert.deepEqual((await h.service.getKey(old.id)).scopes, ['pets:read'])
      assert.deepEqual((await h.storage.keys.changesSince(beforeScopes)).hashes.sort(), [hashKey(key), hashKey(oldKey)].sort())
      assert.deepEqual(h.forgotten.map((f) => f.hash).sort(), [hashKey(key), hashKey(oldKey)].sort())
      assert.deepEqual((await h.forgotten.find((f) => f.hash === hashKey(oldKey))!.stored)?.scopes, ['pets:read'], 'after the commit')

      await conflicts(h.service.rotateKey(old.id, { graceSeconds: 10 }, CLI), old.id, /rotated to/)
      await conflicts(h.service.updateKey(old.id, { name: 'x' }, CLI), old.id, /rotated to/)
      h.clock.advance(3_600_000)
      assert.equal((await h.service.getKey(old.id)).state, 'expired')
      assert.equal((await h.service.getKey(view.id)).state, 'active')
      const entry = (await h.storage.audit.list({ limit: 100, keyId: old.id })).entries.find((e) => e.action === 'key.rotate')!
      assert.deepEqual(entry.details, {
        successorId: view.id,
        graceSeconds: 3600,
        oldKeyExpiresAt: TEST_NOW + 1000 + 3_600_000,
        oldKeyRevokedAt: null,
      })

      // Grace 0 revokes the old key at once; the chain keeps its first quota.
      const again = await h.service.rotateKey(view.id, { graceSeconds: 0 }, CLI)
      assert.equal((await h.service.getKey(view.id)).state, 'revoked')
      assert.equal(again.view.quotaId, old.id)
      for (const bad of [-1, 604_801, 1.5, Number.NaN])
        await rejectsField(h.service.rotateKey(again.view.id, { graceSeconds: bad }, CLI), 'gracePeriodSeconds')
      await conflicts(h.service.rotateKey(view.id, { graceSeconds: 10 }, CLI), view.id, /is revoked/)
      await assert.rejects(h.service.rotateKey('key_nope', { graceSeconds: 10 }, CLI), NOT_FOUND)
    })

    test('rotate is all or nothing: a successor that cannot be inserted leaves the old key, the change log and the audit log as they were', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const a = await h.service.createKey({ plan: 'free', name: 'a' }, CLI)
      const b = await h.service.createKey({ plan: 'free', name: 'b' }, CLI)
      const before = await h.storage.keys.findKeyById(a.view.id)
      const cursor = (await h.storage.keys.changesSince(null)).cursor
      const successor = { ...before!, id: 'key_successor', hash: hashKey(b.key), quotaId: a.view.id, rotatedFrom: a.view.id }
      await assert.rejects(
        h.storage.keys.rotateKey(
          { id: a.view.id, expectedUpdatedAt: before!.updatedAt, successor, expiresAt: TEST_NOW + 1000, revokedAt: null, at: TEST_NOW + 1 },
          { audit: [{ at: TEST_NOW, actor: CLI.actor, action: 'key.rotate', keyId: a.view.id, details: {}, requestId: null }] },
        ),
      )
      assert.deepEqual(await h.storage.keys.findKeyById(a.view.id), before)
      assert.equal(await h.storage.keys.findKeyById('key_successor'), undefined)
      assert.deepEqual((await h.storage.keys.changesSince(cursor)).hashes, [])
      assert.equal((await h.storage.audit.list({ limit: 100 })).entries.length, 2)
    })

    test('revoke is idempotent and keeps the first time; usage peeks the quota; last use is the later of stored and pending', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const { view } = await h.service.createKey({ plan: 'free', name: 'a' }, CLI)
      for (let i = 0; i < 3; i++) h.limiter.consumeSync(limiterIdentity(view), view)
      const usage = await h.service.keyUsage(view.id)
      assert.deepEqual(usage.minute, { limit: 60, used: 3, remaining: 57, resetAt: (TEST_NOW - (TEST_NOW % 60_000) + 60_000) / 1000 })
      assert.deepEqual([usage.day.used, usage.day.remaining, usage.ban], [3, 997, { active: false, until: null, level: 0 }])
      assert.equal(usage.lastUsedAt, null)

      await h.storage.keys.recordLastUsed(new Map([[view.id, TEST_NOW + 5]]))
      assert.equal((await h.service.getKey(view.id)).lastUsedAt, TEST_NOW + 5)
      h.pending.set(view.id, TEST_NOW + 9)
      assert.equal((await h.service.keyUsage(view.id)).lastUsedAt, TEST_NOW + 9)
      await h.storage.keys.recordLastUsed(new Map([[view.id, TEST_NOW + 1]]))
      assert.equal((await h.storage.keys.findKeyById(view.id))?.lastUsedAt, TEST_NOW + 5, 'never moves back')

      h.clock.advance(1000)
      const first = await h.service.revokeKey(view.id, CLI)
      assert.deepEqual([first.alreadyRevoked, first.view.state, first.view.revokedAt], [false, 'revoked', TEST_NOW + 1000])
      h.clock.advance(1000)
      const second = await h.service.revokeKey(view.id, ADMIN)
      assert.deepEqual([second.alreadyRevoked, second.view.revokedAt], [true, TEST_NOW + 1000])
      // A repeated revoke changes nothing, but succeeds: on record like every successful call.
      assert.deepEqual(
        (await h.storage.audit.list({ limit: 100, keyId: view.id })).entries.map((e) => [e.action, e.at, e.actor.type, e.details]),
        [
          ['key.create', TEST_NOW, 'cli', { name: 'a', plan: 'free', perMinute: 60, perDay: 1000, expiresAt: null }],
          ['key.revoke', TEST_NOW + 1000, 'cli', {}],
          ['key.revoke', TEST_NOW + 2000, 'admin_token', { alreadyRevoked: true }],
        ],
      )
      assert.equal((await h.service.getKey(view.id)).revokedAt, TEST_NOW + 1000, 'the first revocation time kept')
      await assert.rejects(h.service.revokeKey('key_nope', CLI), NOT_FOUND)
      await assert.rejects(h.service.keyUsage('key_nope'), NOT_FOUND)
    })

    test('revoke takes the keys of the rotation chain still in their grace period: in the answer, the audit log and the cache', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const a = await h.service.createKey({ plan: 'free', name: 'chain' }, CLI)
      const b = await h.service.rotateKey(a.view.id, { graceSeconds: 600 }, CLI)
      const c = await h.service.rotateKey(b.view.id, { graceSeconds: 600 }, CLI)
      const d = await h.service.rotateKey(c.view.id, { graceSeconds: 600 }, CLI)
      h.forgotten.length = 0
      h.clock.advance(1000)
      // An old key named: the other grace periods end with it; the chain's current key goes on.
      const first = await h.service.revokeKey(b.view.id, ADMIN)
      assert.deepEqual(
        [first.view.id, first.alreadyRevoked, first.alsoRevoked.map((k) => [k.id, k.state, k.revokedAt])],
        [
          b.view.id,
          false,
          [
            [c.view.id, 'revoked', TEST_NOW + 1000],
            [a.view.id, 'revoked', TEST_NOW + 1000],
          ],
        ],
      )
      assert.equal((await h.service.getKey(d.view.id)).state, 'active')
      assert.deepEqual(h.forgotten.map((f) => f.hash).sort(), [a.key, b.key, c.key].map(hashKey).sort(), 'each dropped from the cache')
      const audit = await h.storage.audit.list({ limit: 100, action: 'key.revoke' })
      assert.deepEqual(
        audit.entries.map((e) => [e.keyId, e.details, e.actor.id, e.requestId]),
        [
          [b.view.id, { alsoRevoked: [c.view.id, a.view.id] }, 'adm_1', 'req-1'],
          [c.view.id, { revokedWith: b.view.id }, 'adm_1', 'req-1'],
          [a.view.id, { revokedWith: b.view.id }, 'adm_1', 'req-1'],
        ],
      )
      const current = await h.service.revokeKey(d.view.id, CLI)
      assert.deepEqual([current.alreadyRevoked, current.alsoRevoked], [false, []], 'no grace left to end')
    })

    test("a repeated revoke that ends a grace period, and a leak's report, are written in the revocation's transaction", async (t) => {
      // Only the revocation's own transaction writes: a write of its own (as a read's) fails here.
      const h = await harness(t, engine.open, () => ({ write: () => Promise.reject(new Error('no write of its own')) }))
      if (!h) return
      const a = await h.service.createKey({ plan: 'free', name: 'chain' }, CLI)
      const b = await h.service.rotateKey(a.view.id, { graceSeconds: 600 }, CLI)
      // b is revoked by its rotation (no grace) while a is still in its grace.
      const c = await h.service.rotateKey(b.view.id, { graceSeconds: 0 }, CLI)
      const again = await h.service.revokeKey(b.view.id, ADMIN)
      assert.deepEqual([again.alreadyRevoked, again.alsoRevoked.map((k) => k.id)], [true, [a.view.id]])
      const leaked = await h.service.reportLeak(c.key, { action: 'revoke', url: 'https://example.com/leak', source: 'content' }, ADMIN)
      assert.equal(leaked?.state, 'revoked')
      const entries = (await h.storage.audit.list({ limit: 100, order: 'desc' })).entries.slice(0, 4).reverse()
      assert.deepEqual(
        entries.map((e) => [e.action, e.keyId, e.details]),
        [
          ['key.revoke', b.view.id, { alreadyRevoked: true, alsoRevoked: [a.view.id] }],
          ['key.revoke', a.view.id, { revokedWith: b.view.id }],
          ['key.leak_reported', c.view.id, { url: 'https://example.com/leak', source: 'content', action: 'revoke', state: 'active' }],
          ['key.revoke', c.view.id, { leakUrl: 'https://example.com/leak' }],
        ],
      )
    })

    test('concurrent updates of one key lose nothing: each applies on the state the other left', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const { view } = await h.service.createKey({ plan: 'free', name: 'a' }, CLI)
      await Promise.all([
        h.service.updateKey(view.id, { name: 'renamed' }, CLI),
        h.service.updateKey(view.id, { metadata: { m: 1 } }, CLI),
        h.service.updateKey(view.id, { plan: 'pro' }, CLI),
      ])
      const after = await h.service.getKey(view.id)
      assert.deepEqual([after.name, after.metadata, after.plan, after.perMinute], ['renamed', { m: 1 }, 'pro', 300])
      assert.equal((await h.storage.audit.list({ limit: 100, keyId: view.id })).entries.length, 4)
    })

    test('recordLastUsed writes a whole batch at once; the audit log pages by seq', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const views = []
      for (let i = 0; i < 5; i++) views.push((await h.service.createKey({ plan: 'free', name: `k${i}` }, CLI)).view)
      await h.storage.keys.recordLastUsed(new Map(views.map((v, i) => [v.id, TEST_NOW + i])))
      for (const [i, v] of views.entries()) assert.equal((await h.service.getKey(v.id)).lastUsedAt, TEST_NOW + i)
      const first = await h.storage.audit.list({ limit: 2 })
      assert.equal(first.entries.length, 2)
      const rest = await h.storage.audit.list({ limit: 10, after: first.nextAfter! })
      assert.equal(rest.nextAfter, null)
      assert.deepEqual(
        [...first.entries, ...rest.entries].map((e) => e.keyId),
        views.map((v) => v.id),
      )
    })

    test("update, rotate and revoke drop the key from this process's cache once committed; a refused change does not", async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const { service, forgotten } = h
      const { key, view } = await service.createKey({ plan: 'free', name: 'cached' }, CLI)
      assert.equal(forgotten.length, 0, 'a new key is in no cache')

      await service.updateKey(view.id, { plan: 'pro' }, ADMIN)
      assert.equal(forgotten.length, 1)
      assert.equal(forgotten[0]!.hash, hashKey(key))
      assert.equal((await forgotten[0]!.stored)?.plan, 'pro', 'told once the update was committed')
      await rejectsField(service.updateKey(view.id, { plan: 'gold' }, ADMIN), 'plan')
      assert.equal(forgotten.length, 1, 'a refused update tells nothing')

      await service.rotateKey(view.id, { graceSeconds: 0 }, ADMIN)
      assert.equal(forgotten.length, 2)
      assert.equal(forgotten[1]!.hash, hashKey(key))
      assert.notEqual((await forgotten[1]!.stored)?.revokedAt, null, 'told once the rotation was committed')

      const { key: other, view: otherView } = await service.createKey({ plan: 'free', name: 'revoked' }, CLI)
      await service.revokeKey(otherView.id, ADMIN)
      assert.equal(forgotten.length, 3)
      assert.equal(forgotten[2]!.hash, hashKey(other))
      assert.notEqual((await forgotten[2]!.stored)?.revokedAt, null, 'told once the revocation was committed')
      await assert.rejects(service.revokeKey('key_doesnotexist0000', ADMIN), NOT_FOUND)
      assert.equal(forgotten.length, 3, 'an unknown id tells nothing')
    })

    test('create and rotate tell this process of the new key once committed, and log it for the others', async (t) => {
      const h = await harness(t, engine.open)
      if (!h) return
      const cursor = (await h.storage.keys.changesSince(null)).cursor
      const { key, view } = await h.service.createKey({ plan: 'free', name: 'new' }, CLI)
      assert.deepEqual(
        h.created.map((c) => c.hash),
        [hashKey(key)],
      )
      assert.equal((await h.created[0]!.stored)?.id, view.id, 'told once the creation was committed')
      const rotated = await h.service.rotateKey(view.id, { graceSeconds: 60 }, ADMIN)
      assert.deepEqual(
        h.created.map((c) => c.hash),
        [hashKey(key), hashKey(rotated.key)],
      )
      assert.equal((await h.created[1]!.stored)?.id, rotated.view.id, 'the successor, once the rotation was committed')
      await rejectsField(h.service.createKey({ plan: 'gold' as never, name: 'refused' }, CLI), 'plan')
      assert.equal(h.created.length, 2, 'a refused creation tells nothing')
      assert.deepEqual(
        (await h.storage.keys.changesSince(cursor)).hashes,
        [hashKey(key), hashKey(key), hashKey(rotated.key)],
        'the change log names the new key, then the rotated one and its successor',
      )
    })
  })
}
