/**
 * The state machines of orders and animals (src/orders/state.ts) against a model, on both stores:
 * fast-check generates sequences of places (some several at once for one animal), cancels,
 * completes, time passing and sweeps over a few animals, sends them through HTTP, and after every
 * step compares the answers, the caller's orders, the animals' statuses and the inventory with
 * what the model says. A failure shrinks to the shortest sequence that shows it.
 *
 * Each run uses animals and a key of its own on one app (a store per run would cost more than the
 * run on PostgreSQL), and cancels what it left placed at its end, so runs do not see each other
 * but through the inventory, which is compared as a difference from the run's start.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, describe, test } from 'node:test'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { ManualClock } from '../../src/shared/clock.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { bearer, openTestApp, TEST_NOW, type TestApp } from '../helpers/app.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'
import { invariantProblems } from '../orders/helpers.js'

const HOLD_MS = 5 * 60_000
const SCALE = Number(process.env.FUZZ_CI_RUNS ?? 1)
type PetStatus = 'available' | 'pending' | 'sold'
type Status = 'placed' | 'cancelled' | 'completed' | 'expired'

type Step =
  | { kind: 'place'; pet: number; copies: number }
  | { kind: 'cancel' | 'complete'; order: number }
  | { kind: 'wait'; ms: number }
  | { kind: 'sweep' }

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('place' as const), pet: fc.nat(4), copies: fc.constantFrom(1, 1, 1, 3) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constantFrom('cancel' as const, 'complete' as const), order: fc.nat(12) }), weight: 4 },
  {
    arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.constantFrom(1, 60_000, HOLD_MS - 1, HOLD_MS, 2 * HOLD_MS) }),
    weight: 2,
  },
  { arbitrary: fc.constant({ kind: 'sweep' as const }), weight: 1 },
)

/** What the service must show, kept by the rules of src/orders/state.ts, written out here once more. */
class Model {
  readonly orders: Array<{ id: number; pet: number; status: Status; expiresAt: number; endedAt: number | null }> = []

  /** pets[i]: the status of the run's i-th animal (the fifth has none: not for sale). */
  constructor(readonly pets: Array<PetStatus | null>) {}

  expireDue(now: number, only?: (o: Model['orders'][number]) => boolean): number {
    let n = 0
    for (const o of this.orders) {
      if (o.status === 'placed' && o.expiresAt <= now && (only === undefined || only(o))) {
        o.status = 'expired'
        o.endedAt = now
        this.pets[o.pet] = 'available'
        n++
      }
    }
    return n
  }
}

async function runSteps(app: TestApp, steps: Step[]): Promise<void> {
  const clock = app.clock as ManualClock
  const key = bearer(await app.key({ plan: 'enterprise', perMinute: 1_000_000, perDay: 10_000_000 }))
  const send = (method: 'GET' | 'POST', url: string, payload?: unknown): Promise<LightMyRequestResponse> =>
    app.app.inject({
      method,
      url,
      headers: payload === undefined ? key : { ...key, 'content-type': 'application/json' },
      payload: payload as string,
    })
  const model = new Model(['available', 'available', 'available', 'sold', null])
  const petIds: number[] = []
  for (const status of model.pets)
    petIds.push((await send('POST', '/v1/pets', { name: 'Rex', categoryId: 1, ...(status ? { status } : {}) })).json().id)
  const inventoryBefore = (await send('GET', '/v1/store/inventory')).json()
  const seen: number[] = [] // order ids, in the order the model created them
  const counts = () => ({
    available: model.pets.filter((s) => s === 'available').length - 3,
    pending: model.pets.filter((s) => s === 'pending').length,
    sold: model.pets.filter((s) => s === 'sold').length - 1,
  })

  for (const [n, s] of steps.entries()) {
    const at = `step ${n} ${JSON.stringify(s)}`
    const now = clock.now()
    if (s.kind === 'wait') {
      clock.advance(s.ms)
      continue
    }
    if (s.kind === 'sweep') {
      const expired = await app.domain.jobs.orderExpiry.run()
      assert.equal(expired, model.expireDue(now), `${at}: orders the sweep expired`)
    } else if (s.kind === 'place') {
      const answers = await Promise.all(Array.from({ length: s.copies }, () => send('POST', '/v1/store/orders', { petId: petIds[s.pet] })))
      model.expireDue(now, (o) => o.pet === s.pet)
      const status = model.pets[s.pet]
      const created = answers.filter((r) => r.statusCode === 201)
      if (status === 'available') {
        assert.equal(created.length, 1, `${at}: one of ${s.copies} placed`)
        const order = created[0]!.json()
        model.orders.push({ id: order.id, pet: s.pet, status: 'placed', expiresAt: now + HOLD_MS, endedAt: null })
        model.pets[s.pet] = 'pending'
        seen.push(order.id)
        assert.deepEqual([order.status, Date.parse(order.expiresAt)], ['placed', now + HOLD_MS], at)
      } else assert.equal(created.length, 0, `${at}: nothing placed for an animal ${status ?? 'without a status'}`)
      for (const res of answers.filter((r) => r.statusCode !== 201)) {
        assert.equal(res.statusCode, 409, `${at}: ${res.body}`)
        assert.equal(res.json().code, 'pet_not_available')
        assert.match(res.json().message, status === null ? /no status/ : /it is (pending|sold)/)
      }
    } else {
      const target = model.orders[s.order % Math.max(1, model.orders.length)]
      if (target === undefined) continue
      const res = await send('POST', `/v1/store/orders/${target.id}/${s.kind}`)
      model.expireDue(now, (o) => o === target)
      if (target.status === 'placed') {
        assert.equal(res.statusCode, 200, `${at}: ${res.body}`)
        target.status = s.kind === 'cancel' ? 'cancelled' : 'completed'
        target.endedAt = now
        model.pets[target.pet] = s.kind === 'cancel' ? 'available' : 'sold'
      } else {
        assert.equal(res.statusCode, 409, `${at}: ${res.body}`)
        assert.deepEqual([res.json().code, res.json().message.endsWith(`it is ${target.status}`)], ['order_not_placed', true], at)
      }
    }
    // After every step: the caller's orders, the animals and the inventory, as the model says.
    const listed = (await send('GET', '/v1/store/orders?limit=100')).json() as Array<{ id: number; status: Status; endedAt?: string }>
    assert.deepEqual(
      listed.map((o) => [o.id, o.status, o.endedAt === undefined ? null : Date.parse(o.endedAt)]),
      model.orders.map((o) => [o.id, o.status, o.endedAt]),
      `${at}: the orders`,
    )
    for (const [i, id] of petIds.entries())
      assert.equal((await send('GET', `/v1/pets/${id}`)).json().status ?? null, model.pets[i], `${at}: animal ${i}`)
    const inventory = (await send('GET', '/v1/store/inventory')).json()
    const expected = counts()
    assert.deepEqual(
      inventory,
      {
        available: inventoryBefore.available + expected.available,
        pending: inventoryBefore.pending + expected.pending,
        sold: inventoryBefore.sold + expected.sold,
      },
      `${at}: the inventory`,
    )
  }
  assert.deepEqual(await invariantProblems(app.storage), [])
  // Leave nothing placed: later runs count the inventory from theirs.
  for (const o of model.orders) if (o.status === 'placed') await send('POST', `/v1/store/orders/${o.id}/cancel`)
  assert.equal(seen.length, model.orders.length)
}

const property = (app: () => TestApp) =>
  fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => runSteps(app(), steps))

describe('the state machine against a model', { timeout: 240_000 }, () => {
  test('SQLite', async () => {
    const app = await openTestApp({ env: { ORDER_HOLD_MINUTES: '5', ORDER_SWEEP_MS: '600000' } })
    try {
      await fc.assert(
        property(() => app),
        { numRuns: Math.round(100 * SCALE) },
      )
    } finally {
      await app.close()
    }
  })

  const schemas: string[] = []
  after(async () => {
    for (const schema of schemas) await dropSchema(schema)
  })

  test('PostgreSQL', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `orders_${randomBytes(6).toString('hex')}`
    schemas.push(schema)
    // The app's clock judges the store's holds too (holdClock), so that the model can run holds out.
    const clock = new ManualClock(TEST_NOW)
    const app = await openTestApp({
      env: { ORDER_HOLD_MINUTES: '5', ORDER_SWEEP_MS: '600000' },
      clock,
      storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema, holdClock: clock }),
    })
    try {
      await fc.assert(
        property(() => app),
        { numRuns: Math.round(25 * SCALE) },
      )
    } finally {
      await app.close()
    }
  })
})
