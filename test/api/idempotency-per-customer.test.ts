/**
 * Idempotency-Key records belong to the customer, as its quota and its orders do: a create or an
 * order retried through another key of the customer replays the first answer (one animal, one
 * order); keys of other customers, and keys without a customer, keep records of their own. Through
 * app.inject on SQLite and PostgreSQL. See docs/api.md, "Idempotent creates".
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type AdminTestApp, buildAdminTestApp } from '../admin/helpers.js'
import { bearer } from '../helpers/app.js'
import { STORE_ENGINES } from '../helpers/stores.js'

interface Keys {
  /** Two keys of one customer. */
  mine: [string, string]
  /** A key of another customer. */
  theirs: string
  /** Two keys without a customer. */
  plain: [string, string]
}

async function keys(a: AdminTestApp): Promise<Keys> {
  const make = async (path: string, body: unknown) => {
    const res = await a.call('POST', path, body)
    assert.equal(res.statusCode, 201, res.body)
    return res.json()
  }
  const shop = await make('/admin/v1/customers', { name: 'Shop', plan: 'pro' })
  const other = await make('/admin/v1/customers', { name: 'Other', plan: 'pro' })
  const key = async (body: Record<string, unknown>) => (await make('/admin/v1/keys', { name: 'k', ...body })).key as string
  return {
    mine: [await key({ customerId: shop.id }), await key({ customerId: shop.id })],
    theirs: await key({ customerId: other.id }),
    plain: [await key({ plan: 'pro' }), await key({ plan: 'pro' })],
  }
}

const post = (a: AdminTestApp, url: string, key: string, payload: unknown, idempotencyKey: string) =>
  a.api.inject({
    method: 'POST',
    url,
    headers: { ...bearer(key), 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    payload: JSON.stringify(payload),
  })

const createPet = (a: AdminTestApp, key: string, name: string, idempotencyKey: string) =>
  post(a, '/v1/pets', key, { name, categoryId: 1, status: 'available' }, idempotencyKey)

const named = async (a: AdminTestApp, key: string, name: string) =>
  ((await a.api.inject({ url: '/v1/pets?limit=100', headers: bearer(key) })).json() as Array<{ name: string }>).filter(
    (p) => p.name === name,
  ).length

for (const engine of STORE_ENGINES) {
  describe(`Idempotency-Key per customer (${engine.name})`, () => {
    test('a create retried through another key of the customer replays the first answer: one animal', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const { mine } = await keys(a)
      const first = await createPet(a, mine[0], 'Once', 'create-1')
      assert.equal(first.statusCode, 201, first.body)
      const retry = await createPet(a, mine[1], 'Once', 'create-1')
      assert.equal(retry.statusCode, 201, retry.body)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.equal(retry.body, first.body, 'the same animal, byte for byte')
      assert.equal(retry.headers.location, first.headers.location)
      assert.equal(await named(a, mine[0], 'Once'), 1, 'one animal')
      const reused = await createPet(a, mine[1], 'Another', 'create-1')
      assert.equal(reused.statusCode, 422, reused.body)
      assert.equal(reused.json().code, 'idempotency_key_reused', 'the same key with another body, through either key')
    })

    test('an order retried through another key of the customer replays the first order (not 409 pet_not_available)', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const { mine } = await keys(a)
      const pet = (await createPet(a, mine[0], 'Ordered', 'pet-for-order')).json()
      const first = await post(a, '/v1/store/orders', mine[0], { petId: pet.id }, 'order-1')
      assert.equal(first.statusCode, 201, first.body)
      const retry = await post(a, '/v1/store/orders', mine[1], { petId: pet.id }, 'order-1')
      assert.equal(retry.statusCode, 201, retry.body)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.equal(retry.body, first.body, 'the first order, byte for byte')
      const listed = (await a.api.inject({ url: '/v1/store/orders', headers: bearer(mine[1]) })).json()
      assert.deepEqual(
        listed.map((o: { id: number }) => o.id),
        [first.json().id],
        'one order, seen by both keys',
      )
    })

    test('keys of another customer, and keys without a customer, have records of their own', async (t) => {
      const storage = await engine.open(t)
      if (storage === undefined) return
      const a = await buildAdminTestApp(t, { storage })
      const { mine, theirs, plain } = await keys(a)
      const ids = new Set<number>()
      for (const key of [mine[0], theirs, plain[0], plain[1]]) {
        const res = await createPet(a, key, 'Apart', 'same-key')
        assert.equal(res.statusCode, 201, res.body)
        assert.equal(res.headers['idempotent-replayed'], undefined, 'a first use in its own scope')
        ids.add(res.json().id)
      }
      assert.equal(ids.size, 4, 'four animals')
      const pet = (await createPet(a, plain[0], 'For sale', 'pet-for-order')).json()
      const order = await post(a, '/v1/store/orders', mine[0], { petId: pet.id }, 'order-apart')
      assert.equal(order.statusCode, 201, order.body)
      const elsewhere = await post(a, '/v1/store/orders', theirs, { petId: pet.id }, 'order-apart')
      assert.equal(elsewhere.statusCode, 409, elsewhere.body)
      assert.equal(elsewhere.json().code, 'pet_not_available', "another customer's order for the animal, not a replay of this one")
    })
  })
}
