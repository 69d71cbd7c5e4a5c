import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { type TestContext, test } from 'node:test'
import { PostgresStorage } from '../../../src/storage/postgres/postgres-storage.js'
import { bearer, openTestApp, type TestApp } from '../../helpers/app.js'
import { PG_PATIENCE, PG_URL, requireService } from '../../helpers/services.js'
import { dropSchema } from '../../helpers/stores.js'

/** Two instances of the service on one PostgreSQL schema, each with its own caches. */
async function twoInstances(t: TestContext): Promise<[TestApp, TestApp] | undefined> {
  if (!(await requireService(t, 'PostgreSQL'))) return undefined
  const schema = `test_${randomBytes(6).toString('hex')}`
  const open = async () => openTestApp({ storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }) })
  const a = await open()
  const b = await open()
  t.after(async () => {
    await a.close()
    await b.close()
    await dropSchema(schema)
  })
  return [a, b]
}

test('on PostgreSQL a page an instance keeps shows, at once, what it and another instance acknowledged', async (t) => {
  const both = await twoInstances(t)
  if (both === undefined) return
  const [a, b] = both
  const key = bearer(await a.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  const send = (app: TestApp, method: 'GET' | 'POST', url: string, payload?: object) =>
    app.app.inject({ method, url, headers: payload ? { ...key, 'content-type': 'application/json' } : key, payload })
  const listOn = async (app: TestApp, url: string) => (await send(app, 'GET', url)).json() as { id: number; status?: string }[]
  const list = (url: string) => listOn(a, url)
  const created = async (status?: string) =>
    (await send(b, 'POST', '/v1/pets', { name: 'Rex', categoryId: 1, ...(status ? { status } : {}) })).json().id as number

  for (let i = 0; i < 3; i++) await created('available')
  // Read until kept (the doorkeeper keeps a page from its second request; a store check comes first).
  for (let i = 0; i < 4; i++) assert.equal((await list('/v1/pets?limit=2')).length, 2)
  for (let i = 0; i < 4; i++) assert.equal((await list('/v1/pets?limit=10')).length, 3)
  for (let i = 0; i < 4; i++) assert.equal((await send(a, 'GET', '/v1/pets/1')).json().status, 'available')
  // The writer keeps the same pages: its own changes must show in them too.
  for (let i = 0; i < 4; i++) assert.equal((await listOn(b, '/v1/pets?limit=2')).length, 2)
  for (let i = 0; i < 4; i++) assert.equal((await listOn(b, '/v1/pets?limit=10')).length, 3)
  for (let i = 0; i < 4; i++) assert.equal((await send(b, 'GET', '/v1/pets/1')).json().status, 'available')

  const fourth = await created()
  assert.deepEqual(
    (await list('/v1/pets?limit=10')).map((p) => p.id),
    [1, 2, 3, fourth],
    'the tail page has the pet created on the other instance',
  )
  assert.deepEqual(
    (await listOn(b, '/v1/pets?limit=10')).map((p) => p.id),
    [1, 2, 3, fourth],
    'and on the instance that created it',
  )
  const order = await send(b, 'POST', '/v1/store/orders', { petId: 1 })
  assert.equal(order.statusCode, 201)
  assert.equal((await list('/v1/pets?limit=2'))[0]!.status, 'pending', 'the full page shows the order of the other instance')
  assert.equal((await send(a, 'GET', '/v1/pets/1')).json().status, 'pending')
  assert.equal((await listOn(b, '/v1/pets?limit=2'))[0]!.status, 'pending', 'and on the instance that placed it')
  assert.equal((await send(b, 'GET', '/v1/pets/1')).json().status, 'pending')
  assert.deepEqual(
    (await list('/v1/pets?limit=10&status=available')).map((p) => p.id),
    [2, 3],
  )
})
