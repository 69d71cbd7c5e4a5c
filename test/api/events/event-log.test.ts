/**
 * The event log written by the changes it tells of (src/events/, written by each store's
 * writeChange in the change's transaction), through app.inject, the same test body on SQLite and
 * PostgreSQL: each change writes exactly one event whose data is what the API answered; a refused
 * change writes none; an order whose hold ran out is expired once, with one event, whether the
 * sweep or a change found it.
 */
import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { ManualClock } from '../../../src/shared/clock.js'
import { bearer, openTestApp, TEST_NOW, type TestApp } from '../../helpers/app.js'
import { STORE_ENGINES } from '../../helpers/stores.js'

type Headers = Record<string, string>
const HOLD_MS = 30 * 60_000

interface Harness {
  t: TestApp
  clock: ManualClock
  key: Headers
  post: (url: string, payload?: unknown) => Promise<LightMyRequestResponse>
  /** Every event in the store, oldest first, as GET /v1/events shows them (all types). */
  events: () => Promise<Array<{ id: string; type: string; timestamp: string; data: Record<string, unknown> }>>
}

async function open(engine: (typeof STORE_ENGINES)[number], tc: TestContext): Promise<Harness | undefined> {
  const clock = new ManualClock(TEST_NOW)
  const storage = await engine.open(tc, { holdClock: clock })
  if (!storage) return undefined
  const t = await openTestApp({ storage, clock })
  tc.after(() => t.close())
  const key = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  const post = (url: string, payload?: unknown) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: payload === undefined ? key : { ...key, 'content-type': 'application/json' },
      payload: payload as string,
    })
  const events = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: key })
    assert.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  return { t, clock, key, post, events }
}

for (const engine of STORE_ENGINES) {
  describe(`the event log on ${engine.name}`, () => {
    test('a pet created: one pet.created with the pet as answered; a replay writes none', async (tc) => {
      const h = await open(engine, tc)
      if (!h) return
      const created = await h.post('/v1/pets', '{"name":"Rex","categoryId":9223372036854775807,"status":"available"}')
      assert.equal(created.statusCode, 201, created.body)
      const once = { 'idempotency-key': 'k1' }
      const first = await h.t.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...h.key, ...once, 'content-type': 'application/json' },
        payload: { name: 'Tom', categoryId: 1 },
      })
      const replay = await h.t.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...h.key, ...once, 'content-type': 'application/json' },
        payload: { name: 'Tom', categoryId: 1 },
      })
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      const plain = await h.post('/v1/pets', '{"name":"Bo \\"the\\" 0","categoryId":0}')
      assert.equal(plain.statusCode, 201, plain.body)
      const res = await h.t.app.inject({ method: 'GET', url: '/v1/events', headers: h.key })
      // The event's data is the answer's text, with the id the create gave (on PostgreSQL written
      // from the insert's own row, insertWithChange) and the int64 categoryId exact.
      assert.ok(created.body.includes('"categoryId":9223372036854775807'), created.body)
      for (const answer of [created, plain]) assert.ok(res.body.includes(`"data":${answer.body}}`), `${answer.body} in ${res.body}`)
      const events = await h.events()
      assert.deepEqual(
        events.map((e) => e.type),
        ['pet.created', 'pet.created', 'pet.created'],
      )
      assert.deepEqual(events[1]!.data, first.json())
      assert.equal(events[0]!.timestamp, new Date(TEST_NOW).toISOString())
      assert.match(events[0]!.id, /^evt_[0-9A-Za-z]{24}$/)
      assert.notEqual(events[0]!.id, events[1]!.id)
    })

    test('orders placed, completed, cancelled: one event each with the order as answered; a refused change none', async (tc) => {
      const h = await open(engine, tc)
      if (!h) return
      const pet = async () => (await h.post('/v1/pets', { name: 'Rex', categoryId: 1, status: 'available' })).json().id
      const [a, b] = [await pet(), await pet()]
      const placedA = await h.post('/v1/store/orders', { petId: a })
      const placedB = await h.post('/v1/store/orders', { petId: b })
      assert.equal((await h.post('/v1/store/orders', { petId: a })).statusCode, 409, 'the animal is held')
      assert.equal((await h.post('/v1/store/orders', { petId: 987_654 })).statusCode, 422)
      h.clock.advance(1000)
      const completed = await h.post(`/v1/store/orders/${placedA.json().id}/complete`)
      const cancelled = await h.post(`/v1/store/orders/${placedB.json().id}/cancel`)
      assert.equal((await h.post(`/v1/store/orders/${placedB.json().id}/cancel`)).statusCode, 409, 'cancelled already')
      const orderEvents = (await h.events()).filter((e) => e.type.startsWith('order.'))
      assert.deepEqual(
        orderEvents.map((e) => [e.type, e.data]),
        [
          ['order.placed', placedA.json()],
          ['order.placed', placedB.json()],
          ['order.completed', completed.json()],
          ['order.cancelled', cancelled.json()],
        ],
      )
      assert.equal(orderEvents[2]!.timestamp, new Date(TEST_NOW + 1000).toISOString(), 'when it ended')
    })

    test('an order expired: by the sweep, or found ended by a change or a new order of its animal, one order.expired each', async (tc) => {
      const h = await open(engine, tc)
      if (!h) return
      const orders: Array<{ id: number; petId: number }> = []
      for (let i = 0; i < 3; i++) {
        const petId = (await h.post('/v1/pets', { name: `Rex ${i}`, categoryId: 1, status: 'available' })).json().id
        orders.push((await h.post('/v1/store/orders', { petId })).json())
      }
      h.clock.advance(HOLD_MS)
      assert.equal(await h.t.domain.jobs.orderExpiry.run(), 3)
      assert.equal(await h.t.domain.jobs.orderExpiry.run(), 0, 'once')
      const expired = (await h.events()).filter((e) => e.type === 'order.expired')
      assert.deepEqual(
        expired.map((e) => e.data.id),
        orders.map((o) => o.id),
      )
      assert.ok(expired.every((e) => e.data.status === 'expired' && e.timestamp === new Date(TEST_NOW + HOLD_MS).toISOString()))

      // Found ended on the way, before any sweep: by a cancel (refused, the expiry kept) and by a new order of the animal.
      const petOf = async () => (await h.post('/v1/pets', { name: 'Kit', categoryId: 1, status: 'available' })).json().id
      const [p, q] = [await petOf(), await petOf()]
      const held = [(await h.post('/v1/store/orders', { petId: p })).json(), (await h.post('/v1/store/orders', { petId: q })).json()]
      h.clock.advance(HOLD_MS)
      assert.equal((await h.post(`/v1/store/orders/${held[0].id}/cancel`)).statusCode, 409)
      assert.equal((await h.post('/v1/store/orders', { petId: q })).statusCode, 201)
      assert.equal(await h.t.domain.jobs.orderExpiry.run(), 0)
      const later = (await h.events()).slice(-3)
      assert.deepEqual(
        later.map((e) => [e.type, e.data.id]),
        [
          ['order.expired', held[0].id],
          ['order.expired', held[1].id],
          ['order.placed', later[2]!.data.id],
        ],
      )
    })
  })
}
