/**
 * Customers (issue 31) through the admin API and the public API (app.inject), on SQLite in memory
 * and PostgreSQL: create, list (paging, filters), get, update, usage history, audit; keys with a
 * customerId take its plan and share one quota (the in-memory limiter here; three instances on
 * PostgreSQL + Redis in test/system/deploy/customer-quota.test.ts), its ban, its orders, the
 * RateLimit pk; rotation keeps the customer; a key without one keeps its own quota.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, describe, test } from 'node:test'
import pg from 'pg'
import { PostgresStorage } from '../../../src/storage/postgres/postgres-storage.js'
import type { Storage } from '../../../src/storage/storage.js'
import { PG_PATIENCE, PG_URL, pgReachable, REQUIRE_SERVICES, SERVICES_OFF } from '../../helpers/services.js'
import { buildAdminSuiteApp, buildAdminTestApp } from '../helpers.js'

const ENGINES: Array<{ name: string; open(): Promise<{ storage: Storage; drop(): Promise<void> } | undefined> }> = [
  { name: 'SQLite', open: async () => undefined },
  {
    name: 'PostgreSQL',
    async open() {
      if (SERVICES_OFF) return undefined
      if (!(await pgReachable())) {
        if (REQUIRE_SERVICES) throw new Error(`required but missing: PostgreSQL unreachable at ${PG_URL}`)
        process.stderr.write(`\n!!! SKIPPED: PostgreSQL unreachable at ${PG_URL} — customers ran on SQLite only !!!\n\n`)
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

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

for (const engine of ENGINES) {
  describe(`customers (${engine.name})`, () => {
    let dropSchema: (() => Promise<void>) | undefined
    const t = buildAdminSuiteApp(async () => {
      const opened = await engine.open()
      dropSchema = opened?.drop
      // No poll within a test: what this instance sees at once, it sees from its own cache's invalidation.
      const env = { KEY_REFRESH_MS: '60000' }
      return opened === undefined ? { env } : { env, storage: opened.storage }
    })
    after(async () => {
      await dropSchema?.()
    })

    const customer = async (body: Record<string, unknown>) => {
      const res = await t.call('POST', '/admin/v1/customers', body)
      assert.equal(res.statusCode, 201, res.body)
      return res.json()
    }
    const key = async (body: Record<string, unknown>) => {
      const res = await t.call('POST', '/admin/v1/keys', { name: 'k', ...body })
      assert.equal(res.statusCode, 201, res.body)
      return res.json() as { key: string; apiKey: Record<string, unknown> }
    }

    test('create (201, Location, cus_ id), get, 404, list with paging and filters, audited', async () => {
      const acme = await customer({ name: 'Acme Corp', plan: 'pro', metadata: { account: 'A-1' } })
      assert.match(acme.id, /^cus_[0-9A-Za-z]{16}$/)
      assert.deepEqual(
        { ...acme, id: 'x', createdAt: 'x', updatedAt: 'x' },
        {
          id: 'x',
          name: 'Acme Corp',
          plan: 'pro',
          perMinute: 300,
          perDay: 10_000,
          metadata: { account: 'A-1' },
          createdAt: 'x',
          updatedAt: 'x',
        },
      )
      const big = await customer({ name: 'Big Co', plan: 'enterprise', perMinute: 5000, perDay: 1_000_000 })
      assert.deepEqual([big.perMinute, big.perDay], [5000, 1_000_000])
      assert.deepEqual((await t.call('GET', `/admin/v1/customers/${acme.id}`)).json(), acme)
      const missing = await t.call('GET', '/admin/v1/customers/cus_0000000000000000')
      assert.equal(missing.statusCode, 404)
      assert.match(missing.json().message, /No customer with id cus_0000000000000000/)
      // Bad input: 400 naming the field.
      const noLimits = await t.call('POST', '/admin/v1/customers', { name: 'x', plan: 'enterprise' })
      assert.equal(noLimits.statusCode, 400)
      assert.match(noLimits.json().message, /^perMinute/)
      const fixed = await t.call('POST', '/admin/v1/customers', { name: 'x', plan: 'free', perDay: 5 })
      assert.equal(fixed.statusCode, 400)
      assert.match(fixed.json().message, /^perDay/)
      // Paging and filters.
      const first = await t.call('GET', '/admin/v1/customers?limit=1')
      assert.equal(first.json().data.length, 1)
      assert.match(String(first.headers.link), /rel="next"/)
      const rest = await t.call('GET', `/admin/v1/customers?limit=100&after=${first.json().nextAfter}`)
      const ids = [first.json().data[0].id, ...rest.json().data.map((c: { id: string }) => c.id)]
      assert.ok(ids.includes(acme.id) && ids.includes(big.id))
      assert.deepEqual(
        (await t.call('GET', '/admin/v1/customers?plan=enterprise')).json().data.map((c: { id: string }) => c.id),
        [big.id],
      )
      assert.deepEqual(
        (await t.call('GET', '/admin/v1/customers?name=acme')).json().data.map((c: { id: string }) => c.id),
        [acme.id],
      )
      const audit = (await t.call('GET', '/admin/v1/audit-log?action=customer.create&order=desc&limit=2')).json()
      assert.deepEqual(
        audit.data.map((e: { details: { customerId: string } }) => e.details.customerId),
        [big.id, acme.id],
      )
      const reads = (await t.call('GET', '/admin/v1/audit-log?action=customer.read&limit=100')).json()
      assert.ok(reads.data.some((e: { details: { customerId: string } }) => e.details.customerId === acme.id))
      assert.ok((await t.call('GET', '/admin/v1/audit-log?kind=read&action=customer.list')).json().data.length > 0)
    })

    test('a key with customerId takes its plan; plan with a customer is 400; unknown customer 400; list by customer', async () => {
      const c = await customer({ name: 'Keyed', plan: 'enterprise', perMinute: 700, perDay: 7000 })
      const { apiKey } = await key({ customerId: c.id })
      assert.deepEqual([apiKey.customerId, apiKey.plan, apiKey.perMinute, apiKey.perDay], [c.id, 'enterprise', 700, 7000])
      const withPlan = await t.call('POST', '/admin/v1/keys', { name: 'k', customerId: c.id, plan: 'pro' })
      assert.equal(withPlan.statusCode, 400)
      assert.match(withPlan.json().message, /^plan: a key of a customer takes the customer's plan/)
      const unknown = await t.call('POST', '/admin/v1/keys', { name: 'k', customerId: 'cus_0000000000000000' })
      assert.equal(unknown.statusCode, 400)
      assert.match(unknown.json().message, /^customerId: no customer with id cus_0000000000000000/)
      const noPlan = await t.call('POST', '/admin/v1/keys', { name: 'k' })
      assert.equal(noPlan.statusCode, 400)
      assert.match(noPlan.json().message, /^plan/)
      const plain = await key({ plan: 'free' })
      assert.equal(plain.apiKey.customerId, null)
      const listed = (await t.call('GET', `/admin/v1/keys?customerId=${c.id}`)).json()
      assert.deepEqual(
        listed.data.map((k: { id: string }) => k.id),
        [apiKey.id],
      )
      // The key's own plan is the customer's to change.
      const patch = await t.call('PATCH', `/admin/v1/keys/${apiKey.id}`, { plan: 'free' })
      assert.equal(patch.statusCode, 400)
      const renamed = await t.call('PATCH', `/admin/v1/keys/${apiKey.id}`, { name: 'renamed' })
      assert.equal(renamed.statusCode, 200, renamed.body)
      const created = (await t.call('GET', `/admin/v1/audit-log?keyId=${apiKey.id}&action=key.create`)).json()
      assert.equal(created.data[0].details.customerId, c.id)
    })

    test('PATCH changes the customer and every key of it, at once on this instance; rotation keeps the customer', async () => {
      const c = await customer({ name: 'Growing', plan: 'free' })
      const a = await key({ customerId: c.id })
      const b = await key({ customerId: c.id })
      // The main listener caches `a` (Free) before the change; the admin listener of the same process changes the plan.
      assert.equal((await t.api.inject({ url: '/v1/pets', headers: bearer(a.key) })).headers['x-ratelimit-limit'], '60')
      const updated = await t.call('PATCH', `/admin/v1/customers/${c.id}`, { plan: 'pro', name: 'Grown' })
      assert.equal(updated.statusCode, 200, updated.body)
      const next = await t.api.inject({ url: '/v1/pets', headers: bearer(a.key) })
      assert.equal(next.headers['x-ratelimit-limit'], '300', 'the very next request with the cached key has the new plan, no poll between')
      assert.deepEqual([updated.json().plan, updated.json().name, updated.json().perMinute], ['pro', 'Grown', 300])
      for (const k of [a, b]) {
        const view = (await t.call('GET', `/admin/v1/keys/${k.apiKey.id}`)).json()
        assert.deepEqual([view.plan, view.perMinute, view.perDay], ['pro', 300, 10_000])
      }
      assert.equal((await t.api.inject({ url: '/v1/pets', headers: bearer(b.key) })).headers['x-ratelimit-limit'], '300')
      const entry = (await t.call('GET', '/admin/v1/audit-log?action=customer.update&order=desc&limit=1')).json().data[0]
      assert.deepEqual(entry.details.changed, ['name', 'plan', 'perMinute', 'perDay'])
      assert.equal((await t.call('PATCH', `/admin/v1/customers/${c.id}`, {})).statusCode, 400)
      assert.equal((await t.call('PATCH', '/admin/v1/customers/cus_0000000000000000', { name: 'x' })).statusCode, 404)
      const rotated = await t.call('POST', `/admin/v1/keys/${a.apiKey.id}/rotate`, { gracePeriodSeconds: 0 })
      assert.equal(rotated.statusCode, 201, rotated.body)
      assert.equal(rotated.json().apiKey.customerId, c.id)
    })
  })
}

describe('the shared quota of a customer (in-memory limiter)', () => {
  test('two keys of a Free customer: 40 + 20 answered, the 61st is 429 from either; another customer and a plain key are not affected', async (t) => {
    const a = await buildAdminTestApp(t)
    const make = async (path: string, body: unknown) => (await a.call('POST', path, body)).json()
    const free = await make('/admin/v1/customers', { name: 'Free Co', plan: 'free' })
    const other = await make('/admin/v1/customers', { name: 'Other Co', plan: 'free' })
    const k1 = (await make('/admin/v1/keys', { name: 'one', customerId: free.id })).key
    const k2 = (await make('/admin/v1/keys', { name: 'two', customerId: free.id })).key
    const k3 = (await make('/admin/v1/keys', { name: 'three', customerId: other.id })).key
    const plain = (await make('/admin/v1/keys', { name: 'plain', plan: 'free' })).key
    const get = (key: string) => a.api.inject({ url: '/v1/pets', headers: bearer(key) })
    for (let i = 0; i < 40; i++) assert.equal((await get(k1)).statusCode, 200)
    let last = await get(k2)
    for (let i = 1; i < 20; i++) last = await get(k2)
    assert.equal(last.statusCode, 200)
    assert.equal(last.headers['x-ratelimit-remaining'], '0')
    assert.equal((await get(k1)).statusCode, 429)
    assert.equal((await get(k2)).statusCode, 429)
    const others = await get(k3)
    assert.equal(others.statusCode, 200)
    assert.equal(others.headers['x-ratelimit-remaining'], '59')
    assert.equal((await get(plain)).headers['x-ratelimit-remaining'], '59')
    // One ban too: 2 refusals so far, 57 more from one key, and the 60th (from the other) bans both.
    for (let i = 0; i < 57; i++) assert.equal((await get(k1)).json().code, 'rate_limited')
    assert.equal((await get(k2)).json().code, 'key_banned')
    assert.equal((await get(k1)).json().code, 'key_banned')
    assert.equal((await get(k3)).statusCode, 200)
    // The customer's usage history is the sum of its keys' (this instance's pending counts).
    const history = await a.call('GET', `/admin/v1/customers/${free.id}/usage/history`)
    assert.equal(history.statusCode, 200, history.body)
    type Bucket = { allowed: number; rateLimited: number; banned: number }
    const sum = history.json().data.reduce((n: number, b: Bucket) => n + b.allowed + b.rateLimited + b.banned, 0)
    assert.equal(sum, 121, '60 allowed, 59 rate limited, 2 banned')
    assert.equal((await a.call('GET', '/admin/v1/customers/cus_0000000000000000/usage/history')).statusCode, 404)
  })

  // Issue 43: a customer's key answered its own id as quotaId, though the customer's quota is
  // the one it counts against (the pk and the counts said so).
  test('quotaId names the quota counted: the customer’s id for its keys (view, list, usage, rotation), the chain’s for a plain key', async (t) => {
    const a = await buildAdminTestApp(t)
    const make = async (path: string, body: unknown) => (await a.call('POST', path, body)).json()
    const c = await make('/admin/v1/customers', { name: 'Quota Co', plan: 'free' })
    const one = (await make('/admin/v1/keys', { name: 'one', customerId: c.id })).apiKey
    const two = (await make('/admin/v1/keys', { name: 'two', customerId: c.id })).apiKey
    const plain = (await make('/admin/v1/keys', { name: 'plain', plan: 'free' })).apiKey
    assert.deepEqual([one.quotaId, two.quotaId, plain.quotaId], [c.id, c.id, plain.id])
    assert.equal((await a.call('GET', `/admin/v1/keys/${one.id}`)).json().quotaId, c.id)
    const listed = (await a.call('GET', `/admin/v1/keys?customerId=${c.id}`)).json().data
    assert.deepEqual(
      listed.map((k: { quotaId: string }) => k.quotaId),
      [c.id, c.id],
    )
    // The usage is the customer's: what one key spent, the other's usage shows, under the same quotaId.
    const key = (await make('/admin/v1/keys', { name: 'three', customerId: c.id })).key
    assert.equal((await a.api.inject({ url: '/v1/pets', headers: bearer(key) })).statusCode, 200)
    const usage = (await a.call('GET', `/admin/v1/keys/${one.id}/usage`)).json()
    assert.deepEqual([usage.keyId, usage.quotaId, usage.minute.used], [one.id, c.id, 1])
    assert.equal((await a.call('GET', `/admin/v1/keys/${plain.id}/usage`)).json().quotaId, plain.id)
    const rotated = (await a.call('POST', `/admin/v1/keys/${one.id}/rotate`, { gracePeriodSeconds: 60 })).json()
    assert.deepEqual([rotated.apiKey.quotaId, rotated.previous.quotaId], [c.id, c.id])
    const plainNext = (await a.call('POST', `/admin/v1/keys/${plain.id}/rotate`, { gracePeriodSeconds: 60 })).json()
    assert.equal(plainNext.apiKey.quotaId, plain.id, 'a plain key’s successor counts against the chain’s quota')
  })

  test('pk: the same for every key of a customer, another for another customer and for a plain key; none without a key', async (t) => {
    const a = await buildAdminTestApp(t)
    const make = async (path: string, body: unknown) => (await a.call('POST', path, body)).json()
    const c = await make('/admin/v1/customers', { name: 'PK Co', plan: 'pro' })
    const d = await make('/admin/v1/customers', { name: 'PK Two', plan: 'pro' })
    const pkOf = async (key?: string) => {
      const res = await a.api.inject({ url: '/v1/pets', headers: key === undefined ? {} : bearer(key) })
      const policy = String(res.headers['ratelimit-policy'])
      const fields = String(res.headers.ratelimit)
      const pks = [...`${policy}, ${fields}`.matchAll(/;pk=:([A-Za-z0-9+/=]+):/g)].map((m) => m[1])
      return pks
    }
    const p1 = await pkOf((await make('/admin/v1/keys', { name: 'a', customerId: c.id })).key)
    const p2 = await pkOf((await make('/admin/v1/keys', { name: 'b', customerId: c.id })).key)
    const p3 = await pkOf((await make('/admin/v1/keys', { name: 'c', customerId: d.id })).key)
    const p4 = await pkOf((await make('/admin/v1/keys', { name: 'd', plan: 'pro' })).key)
    assert.equal(p1.length, 4)
    assert.equal(new Set(p1).size, 1)
    assert.deepEqual(p2, p1)
    assert.notEqual(p3[0], p1[0])
    assert.notEqual(p4[0], p1[0])
    assert.ok(!p1[0]!.includes('cus_'))
    assert.deepEqual(await pkOf(undefined), [])
  })

  test('the orders of the store belong to the customer: each of its keys sees them, another customer does not', async (t) => {
    const a = await buildAdminTestApp(t)
    const make = async (path: string, body: unknown) => (await a.call('POST', path, body)).json()
    const c = await make('/admin/v1/customers', { name: 'Shop', plan: 'pro' })
    const d = await make('/admin/v1/customers', { name: 'Elsewhere', plan: 'pro' })
    const k1 = bearer((await make('/admin/v1/keys', { name: 'a', customerId: c.id })).key)
    const k2 = bearer((await make('/admin/v1/keys', { name: 'b', customerId: c.id })).key)
    const k3 = bearer((await make('/admin/v1/keys', { name: 'c', customerId: d.id })).key)
    const json = { 'content-type': 'application/json' }
    const pet = await a.api.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...k1, ...json },
      payload: '{"name":"Rex","categoryId":7,"status":"available"}',
    })
    assert.equal(pet.statusCode, 201, pet.body)
    const order = await a.api.inject({
      method: 'POST',
      url: '/v1/store/orders',
      headers: { ...k1, ...json },
      payload: JSON.stringify({ petId: pet.json().id }),
    })
    assert.equal(order.statusCode, 201, order.body)
    const id = order.json().id
    assert.equal((await a.api.inject({ url: `/v1/store/orders/${id}`, headers: k2 })).statusCode, 200)
    assert.deepEqual(
      (await a.api.inject({ url: '/v1/store/orders', headers: k2 })).json().map((o: { id: unknown }) => o.id),
      [id],
    )
    assert.equal((await a.api.inject({ url: `/v1/store/orders/${id}`, headers: k3 })).statusCode, 404)
  })
})
