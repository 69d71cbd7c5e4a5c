/**
 * Whose clock judges a hold on PostgreSQL: the database's, whatever each instance's says. Two apps
 * on one database whose clocks are 5 s behind and 5 s ahead of the machine's (the database's
 * here): an order placed on one and completed on the other 3 s before the `expiresAt` it showed
 * is completed; one completed after its `expiresAt` is refused (expired), even on the instance
 * whose clock says there is time left; each instance's sweep likewise. How long a hold has left is
 * set on the row itself, from the database's clock (a test cannot wait 30 minutes).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import type { Clock } from '../../src/shared/clock.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { bearer, openTestApp, type TestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'
import { rawQuery } from './helpers.js'

const SKEW_MS = 5_000
const ENTERPRISE = { plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 } as const

/** The machine's clock moved by `offsetMs`: an instance whose clock is off. */
const skewed = (offsetMs: number): Clock => ({ now: () => Date.now() + offsetMs })

const post = (app: TestApp, url: string, key: Record<string, string>, payload?: unknown) =>
  app.app.inject({
    method: 'POST',
    url,
    headers: payload === undefined ? key : { ...key, 'content-type': 'application/json' },
    payload: payload as string,
  })

describe('holds on PostgreSQL are judged by the database’s clock', { timeout: 60_000 }, () => {
  test('two instances ±5 s apart: 3 s before expiresAt completes, after it is expired, on either; the sweeps agree', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = `holds_${randomBytes(6).toString('hex')}`
    const apps: TestApp[] = []
    t.after(async () => {
      for (const app of apps) await app.close()
      await dropSchema(schema)
    })
    for (const offset of [-SKEW_MS, SKEW_MS])
      apps.push(
        await openTestApp({
          clock: skewed(offset),
          env: { ORDER_SWEEP_MS: '600000' },
          storage: await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }),
        }),
      )
    const [slow, fast] = apps as [TestApp, TestApp]
    const key = bearer(await slow.key(ENTERPRISE))

    /** An order of a new animal placed on `app`, as it was answered. */
    const place = async (app: TestApp) => {
      const pet = (await post(app, '/v1/pets', key, { name: 'Rex', categoryId: 1, status: 'available' })).json()
      const before = Date.now()
      const placed = await post(app, '/v1/store/orders', key, { petId: pet.id })
      const after = Date.now()
      assert.equal(placed.statusCode, 201, placed.body)
      const order = placed.json()
      // Placed at the database's time (the machine's here), not the instance's 5 s off; held for ORDER_HOLD_MINUTES.
      const createdAt = Date.parse(order.createdAt)
      assert.ok(createdAt >= before - 100 && createdAt <= after + 100, `createdAt ${order.createdAt} is the database's time`)
      assert.equal(Date.parse(order.expiresAt) - createdAt, 30 * 60_000)
      return order as { id: number; petId: number }
    }
    /** The hold of `id` ends `ms` from now by the database's clock; the `expiresAt` a client is shown now. */
    const endsIn = async (id: number, ms: number) => {
      await rawQuery(
        slow.storage,
        `UPDATE orders SET expires_at = floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + (${ms}) WHERE id = ${id}`,
      )
      const shown = (await slow.app.inject({ url: `/v1/store/orders/${id}`, headers: key })).json()
      const left = Date.parse(shown.expiresAt) - Date.now()
      assert.ok(Math.abs(left - ms) < 1_000, `expiresAt ${shown.expiresAt}: ${left} ms left`)
    }

    // Placed on the slow instance, completed on the fast one (whose clock is 2 s past the end) 3 s before the end shown.
    const kept = await place(slow)
    await endsIn(kept.id, 3_000)
    const completed = await post(fast, `/v1/store/orders/${kept.id}/complete`, key)
    assert.equal(completed.statusCode, 200, `3 s before expiresAt: ${completed.body}`)
    assert.equal(completed.json().status, 'completed')

    // Placed on the fast instance, completed on the slow one (whose clock is 4 s short of the end) 1 s after the end shown.
    const late = await place(fast)
    await endsIn(late.id, -1_000)
    assertError(await post(slow, `/v1/store/orders/${late.id}/complete`, key), 409, 'order_not_placed', /it is expired/)
    assert.equal((await slow.storage.pets.getPet(late.petId))?.status, 'available')

    // The sweeps: the fast instance leaves a hold 3 s from its end alone, the slow one expires a hold 1 s past its end.
    const running = await place(slow)
    await endsIn(running.id, 3_000)
    const over = await place(fast)
    await endsIn(over.id, -1_000)
    assert.equal(await fast.domain.jobs.orderExpiry.run(), 1, 'the fast instance’s sweep expires only the hold that is over')
    assert.equal((await fast.storage.orders.getOrder(running.id))?.status, 'placed')
    assert.equal((await fast.storage.orders.getOrder(over.id))?.status, 'expired')
    const stillHeld = await place(fast)
    await endsIn(stillHeld.id, -1_000)
    assert.equal(await slow.domain.jobs.orderExpiry.run(), 1, 'the slow instance’s sweep expires a hold that is over')
    assert.equal((await slow.storage.orders.getOrder(stillHeld.id))?.status, 'expired')
    assert.equal((await slow.storage.orders.getOrder(running.id))?.status, 'placed')
  })
})
