/**
 * The admin API (/admin/v1) through app.inject: every operation, every bad input (400 naming the
 * field, nothing changed), 404, 401, rate-limit headers, and the audit entries each change leaves.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, describe, test } from 'node:test'
import pg from 'pg'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { generateKey } from '../../src/keys/api-key.js'
import { createFirstKey } from '../../src/keys/key-service.js'
import { ADMIN_QUOTA } from '../../src/shared/plans.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { TEST_NOW } from '../helpers/app.js'
import { PG_PATIENCE, PG_URL, pgReachable, REQUIRE_SERVICES, SERVICES_OFF } from '../helpers/services.js'
import { buildAdminSuiteApp, buildAdminTestApp } from './helpers.js'

const READ_ACTIONS = ['key.list', 'key.read', 'key.usage', 'audit_log.list']

const FUTURE = new Date(TEST_NOW + 30 * 86_400_000).toISOString()

/** The stores the operations run on: SQLite in memory, and PostgreSQL (a fresh schema) when reachable. */
const ENGINES: Array<{ name: string; open(): Promise<{ storage: Storage; drop(): Promise<void> } | undefined> }> = [
  { name: 'SQLite', open: async () => undefined },
  {
    name: 'PostgreSQL',
    async open() {
      if (SERVICES_OFF) return undefined
      if (!(await pgReachable())) {
        if (REQUIRE_SERVICES) throw new Error(`required but missing: PostgreSQL unreachable at ${PG_URL}`)
        process.stderr.write(`\n!!! SKIPPED: PostgreSQL unreachable at ${PG_URL} — the admin API ran on SQLite only !!!\n\n`)
        return undefined
      }
      const schema = `test_${randomBytes(6).toString('hex')}`
      const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, poolSize: 2 })
      const drop = async () => {
        const client = new pg.Client({ connectionString: PG_URL })
        await client.connect()
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await client.end()
      }
      return { storage, drop }
    },
  },
]

for (const engine of ENGINES) {
  describe(`admin API (${engine.name})`, () => {
    let dropSchema: (() => Promise<void>) | undefined
    const t = buildAdminSuiteApp(async () => {
      const opened = await engine.open()
      dropSchema = opened?.drop
      return opened === undefined ? {} : { storage: opened.storage }
    })
    after(async () => {
      await dropSchema?.()
    })

    const create = async (body: Record<string, unknown> = { plan: 'pro', name: 'acme' }) => {
      const res = await t.call('POST', '/admin/v1/keys', body)
      assert.equal(res.statusCode, 201, res.body)
      return res.json() as { key: string; apiKey: { id: string; [k: string]: unknown } }
    }
    /** Entries of changes (reads are on record too, this very one included). */
    const auditCount = async () =>
      ((await t.call('GET', '/admin/v1/audit-log?limit=100')).json().data as Array<{ action: string }>).filter(
        (e) => !READ_ACTIONS.includes(e.action),
      ).length

    test('POST /keys: 201 with the key once, its view and Location; the key works on /v1', async () => {
      const res = await t.call('POST', '/admin/v1/keys', { plan: 'pro', name: 'acme', expiresAt: FUTURE, metadata: { customer: 'c_1' } })
      assert.equal(res.statusCode, 201, res.body)
      const body = res.json()
      assert.match(body.key, /^as_live_[0-9A-Za-z]{38}$/)
      assert.match(body.apiKey.id, /^key_[0-9A-Za-z]{16}$/)
      assert.equal(res.headers.location, `/admin/v1/keys/${body.apiKey.id}`)
      assert.deepEqual(
        { ...body.apiKey, id: undefined, prefix: undefined, quotaId: undefined },
        {
          id: undefined,
          name: 'acme',
          plan: 'pro',
          perMinute: 300,
          perDay: 10_000,
          prefix: undefined,
          quotaId: undefined,
          customerId: null,
          scopes: ['pets:read', 'pets:write', 'orders:read', 'orders:write'],
          state: 'active',
          createdAt: new Date(TEST_NOW).toISOString(),
          updatedAt: new Date(TEST_NOW).toISOString(),
          expiresAt: FUTURE,
          revokedAt: null,
          rotatedTo: null,
          rotatedFrom: null,
          metadata: { customer: 'c_1' },
          lastUsedAt: null,
        },
      )
      assert.equal(body.key.startsWith(body.apiKey.prefix), true)
      const pets = await t.api.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${body.key}` } })
      assert.equal(pets.statusCode, 200)
    })

    test('GET /keys/{id}: the view, never the key; 404 for an unknown id; 400 for a malformed one', async () => {
      const { key, apiKey } = await create()
      const res = await t.call('GET', `/admin/v1/keys/${apiKey.id}`)
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), apiKey)
      assert.equal(res.body.includes(key), false)
      const missing = await t.call('GET', '/admin/v1/keys/key_0000000000000000')
      assert.equal(missing.statusCode, 404)
      assert.deepEqual(missing.json(), { code: 'not_found', message: 'No key with id key_0000000000000000', status: 404 })
      const bad = await t.call('GET', '/admin/v1/keys/nope')
      assert.equal(bad.statusCode, 400)
      assert.match(bad.json().message, /keyId/)
    })

    test('GET /keys: newest first, pages with limit and after, Link rel="next" keeps the filters; filters by plan, state and name', async () => {
      const keys: Array<{ id: string; createdAt: string }> = []
      for (let i = 0; i < 5; i++)
        keys.push((await create({ plan: 'business', name: `Paging ${i}` })).apiKey as { id: string; createdAt: string })
      // Newest first (issue 32): by creation time, then id, both descending.
      const created = keys
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0))
        .map((k) => k.id)
      const seen: string[] = []
      let url: string | undefined = '/admin/v1/keys?limit=2&plan=business&name=paging'
      while (url !== undefined) {
        const res = await t.call('GET', url)
        assert.equal(res.statusCode, 200, res.body)
        const body = res.json()
        assert.ok(body.data.length <= 2)
        seen.push(...body.data.map((k: { id: string }) => k.id))
        const link = res.headers.link as string | undefined
        if (body.nextAfter === null) assert.equal(link, undefined)
        else {
          assert.equal(link, `</admin/v1/keys?limit=2&plan=business&name=paging&after=${body.nextAfter}>; rel="next"`)
        }
        url = link === undefined ? undefined : /<([^>]+)>/.exec(link)![1]
      }
      assert.deepEqual(seen, created)
      const revoked = await t.call('POST', `/admin/v1/keys/${created[0]}/revoke`)
      assert.equal(revoked.statusCode, 200)
      const onlyRevoked = (await t.call('GET', '/admin/v1/keys?state=revoked&plan=business')).json()
      assert.deepEqual(
        onlyRevoked.data.map((k: { id: string }) => k.id),
        [created[0]],
      )
      for (const bad of ['limit=0', 'limit=101', 'limit=5.0', 'plan=gold', 'state=gone', 'after=x', 'sort=id']) {
        const res = await t.call('GET', `/admin/v1/keys?${bad}`)
        assert.equal(res.statusCode, 400, bad)
        assert.match(res.json().message, new RegExp(bad.split('=')[0]!), bad)
      }
    })

    test('PATCH /keys/{id}: changes only the fields sent; null clears expiresAt and metadata', async () => {
      const { apiKey } = await create({ plan: 'free', name: 'patch me', expiresAt: FUTURE, metadata: { a: 1 } })
      const res = await t.call('PATCH', `/admin/v1/keys/${apiKey.id}`, {
        plan: 'enterprise',
        perMinute: 5000,
        perDay: 2_000_000,
        name: 'renamed',
      })
      assert.equal(res.statusCode, 200, res.body)
      const view = res.json()
      assert.equal(view.plan, 'enterprise')
      assert.equal(view.perMinute, 5000)
      assert.equal(view.perDay, 2_000_000)
      assert.equal(view.name, 'renamed')
      assert.equal(view.expiresAt, FUTURE)
      const cleared = (await t.call('PATCH', `/admin/v1/keys/${apiKey.id}`, { expiresAt: null, metadata: null })).json()
      assert.equal(cleared.expiresAt, null)
      assert.equal(cleared.metadata, null)
      assert.equal(cleared.name, 'renamed')
    })

    test('bad input: 400 naming the field, and nothing changed (key, audit log)', async () => {
      const { apiKey } = await create({ plan: 'free', name: 'untouched' })
      const before = (await t.call('GET', `/admin/v1/keys/${apiKey.id}`)).json()
      const entries = await auditCount()
      const cases: Array<[string, string, unknown, RegExp]> = [
        ['POST', '/admin/v1/keys', { plan: 'gold', name: 'x' }, /^plan /],
        ['POST', '/admin/v1/keys', { plan: 'free', name: 'x', perMinute: 10, perDay: 100 }, /perMinute|perDay/],
        ['POST', '/admin/v1/keys', { plan: 'free', name: 'x', expiresAt: '2020-01-01T00:00:00Z' }, /^expiresAt /],
        ['POST', '/admin/v1/keys', { plan: 'free', name: 'x', expiresAt: 'tomorrow' }, /^expiresAt must be an RFC 3339/],
        ['POST', '/admin/v1/keys', { plan: 'free', name: 'x', metadata: { blob: 'x'.repeat(5000) } }, /^metadata /],
        ['POST', '/admin/v1/keys', '{"plan":"free","name":"x","metadata":{"n":1.0}}', /^metadata\.n /],
        ['POST', '/admin/v1/keys', '{"plan":"free","name":"x","metadata":{"n":9007199254740993}}', /^metadata\.n /],
        ['POST', '/admin/v1/keys', { plan: 'free', name: 'x', metadata: [1] }, /^metadata /],
        ['POST', '/admin/v1/keys', { plan: 'free', name: 'x', owner: 'me' }, /unknown field 'owner'/],
        ['POST', '/admin/v1/keys', { plan: 'free' }, /name is required/],
        ['POST', '/admin/v1/keys', { plan: 'free', name: ' ' }, /^name /],
        ['PATCH', `/admin/v1/keys/${apiKey.id}`, { plan: 'gold' }, /^plan /],
        ['PATCH', `/admin/v1/keys/${apiKey.id}`, { perMinute: 10 }, /perMinute/],
        ['PATCH', `/admin/v1/keys/${apiKey.id}`, { name: 'changed', expiresAt: '2020-01-01T00:00:00Z' }, /^expiresAt /],
        ['PATCH', `/admin/v1/keys/${apiKey.id}`, { name: 'changed', metadata: { blob: 'x'.repeat(5000) } }, /^metadata /],
        ['PATCH', `/admin/v1/keys/${apiKey.id}`, { name: 'changed', state: 'active' }, /unknown field 'state'/],
        ['PATCH', `/admin/v1/keys/${apiKey.id}`, {}, /at least one field/],
        ['POST', `/admin/v1/keys/${apiKey.id}/rotate`, { gracePeriodSeconds: 604_801 }, /^gracePeriodSeconds /],
        ['POST', `/admin/v1/keys/${apiKey.id}/rotate`, { gracePeriodSeconds: -1 }, /^gracePeriodSeconds /],
        ['POST', `/admin/v1/keys/${apiKey.id}/rotate`, {}, /gracePeriodSeconds is required/],
        ['POST', `/admin/v1/keys/${apiKey.id}/rotate`, { gracePeriodSeconds: 60, extra: 1 }, /unknown field 'extra'/],
        ['POST', `/admin/v1/keys/${apiKey.id}/revoke`, { reason: 'x' }, /^revoke takes no body/],
        ['POST', `/admin/v1/keys/${apiKey.id}/revoke`, '[]', /^revoke takes no body/],
        ['PATCH', '/admin/v1/keys/key_bad', { name: 'x' }, /keyId/],
        ['POST', '/admin/v1/keys/key_bad/revoke', undefined, /keyId/],
        ['GET', '/admin/v1/keys/key_bad/usage', undefined, /keyId/],
        ['GET', '/admin/v1/audit-log?keyId=nope', undefined, /keyId/],
        ['GET', '/admin/v1/audit-log?after=-1', undefined, /after/],
      ]
      for (const [method, url, body, message] of cases) {
        const res = await t.call(method as 'POST', url, body)
        assert.equal(res.statusCode, 400, `${method} ${url} ${JSON.stringify(body)}: ${res.body}`)
        assert.equal(res.json().code, 'invalid_request')
        assert.match(res.json().message, message, `${method} ${url} ${JSON.stringify(body)}`)
      }
      assert.deepEqual((await t.call('GET', `/admin/v1/keys/${apiKey.id}`)).json(), before)
      assert.equal(await auditCount(), entries)
    })

    test('404 for an unknown key on every key operation, nothing written', async () => {
      const id = 'key_ZZZZZZZZZZZZZZZZ'
      const entries = await auditCount()
      for (const [method, url, body] of [
        ['GET', `/admin/v1/keys/${id}`],
        ['PATCH', `/admin/v1/keys/${id}`, { name: 'x' }],
        ['POST', `/admin/v1/keys/${id}/rotate`, { gracePeriodSeconds: 0 }],
        ['POST', `/admin/v1/keys/${id}/revoke`],
        ['GET', `/admin/v1/keys/${id}/usage`],
      ] as const) {
        const res = await t.call(method, url, body)
        assert.equal(res.statusCode, 404, `${method} ${url}`)
        assert.deepEqual(res.json(), { code: 'not_found', message: `No key with id ${id}`, status: 404 })
      }
      assert.equal(await auditCount(), entries)
    })

    test('rotate: 201 with the new key once, its view and the previous one; both keys work in the grace period', async () => {
      const { key: oldKey, apiKey } = await create({ plan: 'pro', name: 'rotating' })
      const res = await t.call('POST', `/admin/v1/keys/${apiKey.id}/rotate`, { gracePeriodSeconds: 3600 })
      assert.equal(res.statusCode, 201, res.body)
      const body = res.json()
      assert.match(body.key, /^as_live_/)
      assert.notEqual(body.key, oldKey)
      assert.equal(res.headers.location, `/admin/v1/keys/${body.apiKey.id}`)
      assert.equal(body.apiKey.rotatedFrom, apiKey.id)
      assert.equal(body.apiKey.quotaId, apiKey.quotaId)
      assert.equal(body.apiKey.plan, 'pro')
      assert.equal(body.previous.id, apiKey.id)
      assert.equal(body.previous.rotatedTo, body.apiKey.id)
      assert.equal(body.previous.expiresAt, new Date(TEST_NOW + 3600_000).toISOString())
      for (const k of [oldKey, body.key]) {
        assert.equal((await t.api.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${k}` } })).statusCode, 200)
      }
    })

    test('revoke: 200, idempotent (alreadyRevoked, first time kept); the key is refused on /v1', async () => {
      const { key, apiKey } = await create()
      const first = await t.call('POST', `/admin/v1/keys/${apiKey.id}/revoke`)
      assert.equal(first.statusCode, 200)
      assert.equal(first.json().alreadyRevoked, false)
      assert.equal(first.json().apiKey.state, 'revoked')
      t.clock.advance(5000)
      const again = await t.call('POST', `/admin/v1/keys/${apiKey.id}/revoke`, {})
      assert.equal(again.statusCode, 200)
      assert.equal(again.json().alreadyRevoked, true)
      assert.equal(again.json().apiKey.revokedAt, first.json().apiKey.revokedAt)
      await t.domain.keyResolver.refresh()
      assert.equal((await t.api.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode, 401)
    })

    test('a revoked, rotated or (for a rotation) expired key takes no further change: 409 conflict naming the key, nothing written', async () => {
      const { apiKey: revoked } = await create({ plan: 'free', name: 'gone' })
      await t.call('POST', `/admin/v1/keys/${revoked.id}/revoke`)
      const { apiKey: rotated } = await create({ plan: 'free', name: 'old' })
      const successor = (await t.call('POST', `/admin/v1/keys/${rotated.id}/rotate`, { gracePeriodSeconds: 60 })).json().apiKey
      const soon = new Date(t.clock.now() + 1000).toISOString()
      const { apiKey: expired } = await create({ plan: 'free', name: 'brief', expiresAt: soon })
      t.clock.advance(2000)
      const entries = await auditCount()
      const stored = JSON.stringify(await t.storage.keys.listKeys())
      for (const [method, url, body, message] of [
        ['PATCH', `/admin/v1/keys/${revoked.id}`, { name: 'x' }, `key ${revoked.id} is revoked; a revoked key cannot be updated`],
        [
          'POST',
          `/admin/v1/keys/${revoked.id}/rotate`,
          { gracePeriodSeconds: 0 },
          `key ${revoked.id} is revoked; a revoked key cannot be rotated`,
        ],
        [
          'PATCH',
          `/admin/v1/keys/${rotated.id}`,
          { name: 'x' },
          `key ${rotated.id} was rotated to ${successor.id}; change that key instead`,
        ],
        [
          'POST',
          `/admin/v1/keys/${rotated.id}/rotate`,
          { gracePeriodSeconds: 0 },
          `key ${rotated.id} was rotated to ${successor.id}; change that key instead`,
        ],
        [
          'POST',
          `/admin/v1/keys/${expired.id}/rotate`,
          { gracePeriodSeconds: 0 },
          `key ${expired.id} has expired and cannot be rotated; create a new key (or update its expiresAt first)`,
        ],
      ] as const) {
        const res = await t.call(method, url, body)
        assert.equal(res.statusCode, 409, `${method} ${url}: ${res.body}`)
        assert.deepEqual(res.json(), { code: 'conflict', message, status: 409 })
      }
      assert.equal(await auditCount(), entries)
      assert.equal(JSON.stringify(await t.storage.keys.listKeys()), stored)
      // Revoking a revoked key stays idempotent (200), and an expired key can still be brought back.
      assert.equal((await t.call('POST', `/admin/v1/keys/${revoked.id}/revoke`)).json().alreadyRevoked, true)
      assert.equal((await t.call('PATCH', `/admin/v1/keys/${expired.id}`, { expiresAt: null })).json().state, 'active')
    })

    test('usage: minute and day windows, ban, last use, with ISO times', async () => {
      const { apiKey } = await create({ plan: 'free', name: 'usage' })
      const res = await t.call('GET', `/admin/v1/keys/${apiKey.id}/usage`)
      assert.equal(res.statusCode, 200, res.body)
      const u = res.json()
      assert.equal(u.keyId, apiKey.id)
      assert.equal(u.minute.limit, 60)
      assert.equal(u.day.limit, 1000)
      assert.match(u.minute.resetAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      assert.deepEqual(u.ban, { active: false, until: null, level: 0 })
    })

    test('audit log: each change by this token and request id, filtered by key, paged; never a secret', async () => {
      const { key, apiKey } = await create({ plan: 'free', name: 'audited' })
      await t.call('PATCH', `/admin/v1/keys/${apiKey.id}`, { name: 'audited 2' }, { 'x-request-id': 'req-patch-1' })
      // A token pasted as the request id never reaches the log: it is replaced by a UUID.
      const pasted = await t.call('PATCH', `/admin/v1/keys/${apiKey.id}`, { metadata: { n: 1 } }, { 'x-request-id': t.token })
      assert.equal(pasted.statusCode, 200)
      const last = (await t.call('GET', `/admin/v1/audit-log?keyId=${apiKey.id}&limit=100`)).json().data.at(-1)
      assert.equal(last.action, 'key.update')
      assert.match(last.requestId, /^[0-9a-f]{8}-[0-9a-f]{4}-/)
      const rotated = (await t.call('POST', `/admin/v1/keys/${apiKey.id}/rotate`, { gracePeriodSeconds: 0 })).json()
      // Rotated with no grace: revoked already, so this revoke changes nothing, and is on record.
      assert.equal((await t.call('POST', `/admin/v1/keys/${apiKey.id}/revoke`)).json().alreadyRevoked, true)
      const res = await t.call('GET', `/admin/v1/audit-log?keyId=${apiKey.id}`)
      assert.equal(res.statusCode, 200, res.body)
      const entries = res.json().data
      assert.deepEqual(
        entries.map((e: { action: string }) => e.action),
        ['key.create', 'key.update', 'key.update', 'key.rotate', 'key.revoke'],
      )
      assert.deepEqual(entries.at(-1).details, { alreadyRevoked: true })
      for (const e of entries) {
        assert.deepEqual(e.actor, { type: 'admin_token', id: t.tokenId, name: 'test token' })
        assert.equal(e.keyId, apiKey.id)
        assert.match(e.at, /Z$/)
        assert.equal(typeof e.requestId, 'string')
      }
      assert.equal(entries[1].requestId, 'req-patch-1')
      assert.equal(res.body.includes(key), false)
      assert.equal(res.body.includes(rotated.key), false)
      assert.equal(res.body.includes(t.token), false)
      assert.doesNotMatch(res.body, /as_(live|test|admin)_[0-9A-Za-z]{38}/)
      const page = await t.call('GET', `/admin/v1/audit-log?keyId=${apiKey.id}&limit=1`)
      assert.equal(page.json().data.length, 1)
      assert.equal(page.headers.link, `</admin/v1/audit-log?limit=1&keyId=${apiKey.id}&after=${page.json().nextAfter}>; rel="next"`)
    })

    test('audit log: times in details are RFC 3339 like every other time; a repeated revoke and an update to the same values are on record', async () => {
      const { apiKey } = await create({ plan: 'pro', name: 'timed', expiresAt: FUTURE })
      const same = await t.call(
        'PATCH',
        `/admin/v1/keys/${apiKey.id}`,
        { name: 'timed', expiresAt: FUTURE },
        { 'x-request-id': 'same-values' },
      )
      assert.equal(same.statusCode, 200, same.body)
      const rotated = await t.call('POST', `/admin/v1/keys/${apiKey.id}/rotate`, { gracePeriodSeconds: 60 })
      assert.equal(rotated.statusCode, 201, rotated.body)
      assert.equal((await t.call('POST', `/admin/v1/keys/${apiKey.id}/revoke`)).json().alreadyRevoked, false)
      const again = await t.call('POST', `/admin/v1/keys/${apiKey.id}/revoke`, undefined, { 'x-request-id': 'revoke-again' })
      assert.equal(again.json().alreadyRevoked, true)
      const entries = (await t.call('GET', `/admin/v1/audit-log?keyId=${apiKey.id}`)).json().data as Array<Record<string, unknown>>
      const limits = { plan: 'pro', perMinute: 300, perDay: 10_000 }
      assert.deepEqual(
        entries.map((e) => [e.action, e.details]),
        [
          ['key.create', { name: 'timed', ...limits, expiresAt: FUTURE }],
          ['key.update', { changed: [], name: 'timed', ...limits, expiresAt: FUTURE }],
          [
            'key.rotate',
            {
              successorId: rotated.json().apiKey.id,
              graceSeconds: 60,
              oldKeyExpiresAt: rotated.json().previous.expiresAt,
              oldKeyRevokedAt: null,
            },
          ],
          ['key.revoke', {}],
          ['key.revoke', { alreadyRevoked: true }],
        ],
      )
      assert.deepEqual(
        entries.filter((e) => e.requestId === 'same-values' || e.requestId === 'revoke-again').map((e) => e.actor),
        [
          { type: 'admin_token', id: t.tokenId, name: 'test token' },
          { type: 'admin_token', id: t.tokenId, name: 'test token' },
        ],
      )
      assert.match(rotated.json().previous.expiresAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    })

    test('audit log: every successful read is on record too, by this token, with its filters', async () => {
      const { apiKey } = await create({ plan: 'free', name: 'read audit' })
      /** The whole log, page by page (it holds every earlier test's entries too). */
      const wholeLog = async () => {
        const all: Array<Record<string, unknown>> = []
        for (let after: number | null = 0; after !== null; ) {
          const page: { data: Array<Record<string, unknown>>; nextAfter: number | null } = (
            await t.call('GET', `/admin/v1/audit-log?limit=100&after=${after}`)
          ).json()
          all.push(...page.data)
          after = page.nextAfter
        }
        return all
      }
      const reads: Array<[string, string, string | null, Record<string, unknown>]> = [
        [`/admin/v1/keys/${apiKey.id}`, 'key.read', apiKey.id, {}],
        [`/admin/v1/keys/${apiKey.id}/usage`, 'key.usage', apiKey.id, {}],
        ['/admin/v1/keys?plan=free&limit=5', 'key.list', null, { plan: 'free', limit: 5 }],
        [`/admin/v1/audit-log?keyId=${apiKey.id}&limit=3`, 'audit_log.list', null, { keyId: apiKey.id, limit: 3 }],
      ]
      for (const [i, [url, action, keyId, details]] of reads.entries()) {
        const res = await t.call('GET', url, undefined, { 'x-request-id': `read-${i}` })
        assert.equal(res.statusCode, 200, res.body)
        const entries = (await wholeLog()).filter((e) => e.requestId === `read-${i}`)
        assert.equal(entries.length, 1, url)
        assert.equal(entries[0]!.action, action)
        assert.equal(entries[0]!.keyId, keyId)
        assert.deepEqual(entries[0]!.actor, { type: 'admin_token', id: t.tokenId, name: 'test token' })
        assert.deepEqual(entries[0]!.details, details)
      }
      // A read that fails (an unknown key) leaves no entry.
      assert.equal((await t.call('GET', '/admin/v1/keys/key_0000000000000000', undefined, { 'x-request-id': 'read-404' })).statusCode, 404)
      assert.equal((await wholeLog()).filter((e) => e.requestId === 'read-404').length, 0)
    })
  })
}

describe('admin API audit log of a first start', () => {
  test('the key a first start created is in the audit log, by system/bootstrap', async (context) => {
    const t = await buildAdminTestApp(context)
    const first = await createFirstKey(t.storage.keys, t.config.env, TEST_NOW)
    assert.ok(first)
    const res = await t.call('GET', '/admin/v1/audit-log')
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json().data, [
      {
        seq: res.json().data[0].seq,
        at: new Date(TEST_NOW).toISOString(),
        actor: { type: 'system', id: 'bootstrap' },
        action: 'key.create',
        keyId: first.record.id,
        details: { name: 'first key', plan: 'free', perMinute: 60, perDay: 1000, expiresAt: null },
        requestId: null,
      },
    ])
  })
})

describe('admin API authentication and limits', () => {
  const t = buildAdminSuiteApp()

  const get = (authorization?: string) =>
    t.app.inject({ url: '/admin/v1/keys', headers: authorization === undefined ? {} : { authorization } })

  test('401 without a token, with a malformed header, an unknown token or a made-up one', async () => {
    const cases: Array<[string | undefined, RegExp]> = [
      [undefined, /^Missing admin token/],
      ['Basic abc', /^Malformed Authorization header/],
      ['Bearer as_admin_nope', /^Invalid or revoked admin token$/],
      [`Bearer ${t.token.slice(0, -1)}${t.token.endsWith('a') ? 'b' : 'a'}`, /^Invalid or revoked admin token$/],
    ]
    const { token: unknown } = await createAdminToken(
      { insert: async () => 'inserted', findByHash: async () => undefined, list: async () => [], revoke: async () => undefined },
      'never stored',
    )
    cases.push([`Bearer ${unknown}`, /^Invalid or revoked admin token$/])
    for (const [header, message] of cases) {
      const res = await get(header)
      assert.equal(res.statusCode, 401, String(header))
      assert.equal(res.json().code, 'unauthorized')
      assert.match(res.json().message, message)
      assert.match(String(res.headers['www-authenticate']), /^Bearer realm="animal-store"/)
      assert.ok(res.headers['x-ratelimit-limit'] !== undefined, 'limited per address')
    }
  })

  test('an API key is never an admin token: 401 saying so; an admin token is an invalid API key on /v1', async () => {
    for (const key of [generateKey('production'), generateKey('staging')]) {
      const res = await get(`Bearer ${key}`)
      assert.equal(res.statusCode, 401)
      assert.match(res.json().message, /^API keys cannot call the admin API/)
    }
    const pets = await t.api.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${t.token}` } })
    assert.equal(pets.statusCode, 401)
    assert.equal(pets.json().message, 'Invalid or revoked API key')
  })

  test('a revoked token is refused once the change log is read (the key refresh interval)', async () => {
    const { token, record } = await createAdminToken(t.storage.adminTokens, 'short-lived')
    assert.equal((await get(`Bearer ${token}`)).statusCode, 200)
    // As the CLI revokes: in storage, from outside this app; its resolver polls the change log.
    await t.storage.adminTokens.revoke(record.id, Date.now())
    await t.domain.keyResolver.refresh()
    const res = await get(`Bearer ${token}`)
    assert.equal(res.statusCode, 401)
    assert.equal(res.json().message, 'Invalid or revoked admin token')
  })

  test('every admin call carries the rate-limit headers of the admin quota, per token', async () => {
    const first = await get(`Bearer ${t.token}`)
    assert.equal(first.statusCode, 200)
    assert.equal(first.headers['x-ratelimit-limit'], String(ADMIN_QUOTA.perMinute))
    assert.equal(first.headers['ratelimit-policy'], `"minute";q=${ADMIN_QUOTA.perMinute};w=60, "day";q=${ADMIN_QUOTA.perDay};w=86400`)
    const second = await get(`Bearer ${t.token}`)
    assert.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1)
    const { token: other } = await createAdminToken(t.storage.adminTokens, 'other')
    const fresh = await get(`Bearer ${other}`)
    assert.equal(fresh.headers['x-ratelimit-remaining'], String(ADMIN_QUOTA.perMinute - 1))
  })

  test('a token over the admin quota gets 429 rate_limited with Retry-After', async () => {
    const { token } = await createAdminToken(t.storage.adminTokens, 'busy')
    let res = await get(`Bearer ${token}`)
    for (let i = 1; i < ADMIN_QUOTA.perMinute; i++) res = await get(`Bearer ${token}`)
    assert.equal(res.statusCode, 200)
    res = await get(`Bearer ${token}`)
    assert.equal(res.statusCode, 429)
    assert.equal(res.json().code, 'rate_limited')
    assert.ok(Number(res.headers['retry-after']) > 0)
  })
})

describe('admin API links', () => {
  test('paging links stay relative with PUBLIC_BASE_URL (it names the public listener, not the admin one)', async (context) => {
    const t = await buildAdminTestApp(context, { env: { PUBLIC_BASE_URL: 'https://api.example.com' } })
    for (const name of ['one', 'two']) assert.equal((await t.call('POST', '/admin/v1/keys', { plan: 'free', name })).statusCode, 201)
    const res = await t.call('GET', '/admin/v1/keys?limit=1')
    assert.match(String(res.headers.link), /^<\/admin\/v1\/keys\?limit=1&after=key_\w+>; rel="next"$/)
  })
})
