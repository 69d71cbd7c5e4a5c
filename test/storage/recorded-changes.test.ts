/**
 * What a change records beside it (src/changes/), written by the store in the change's own
 * transaction, the same on SQLite and PostgreSQL: for every change of pets and orders, the ones a
 * client makes included (a pet created, an order placed, completed, cancelled, or expired by the
 * sweep or on the way), the record is made from the row as changed and committed with it, or not
 * at all. The records here are audit entries (an operator's cancel has one); the events of these
 * changes take the same path (test/storage/event-log-storage.test.ts, test/api/events/).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { RecordedChange } from '../../src/changes/audit-log.js'
import { holdRule } from '../../src/orders/hold.js'
import type { NewOrder, OrderRecord } from '../../src/orders/repository.js'
import type { Pet } from '../../src/pets/schemas.js'
import { ManualClock } from '../../src/shared/clock.js'
import type { Storage } from '../../src/storage/storage.js'
import { STORE_ENGINES } from '../helpers/stores.js'

const HOLD = 30 * 60_000
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0)
const order = (petId: number): NewOrder => ({ petId, owner: 'k:key_a', keyId: 'key_a', holdEnds: holdRule(HOLD) })

/** A record of one entry naming what changed, as the row was when the store made the record. */
const recordOf = (details: Record<string, unknown>): RecordedChange => ({
  audit: [{ at: T0, actor: { type: 'system', id: 'test' }, action: 'order.cancel', keyId: null, details, requestId: null }],
})
const ofOrder = (o: OrderRecord) => recordOf({ order: o.id, status: o.status })
const ofPet = (p: Pet) => recordOf({ pet: p.id })

async function recorded(storage: Storage): Promise<unknown[]> {
  return (await storage.audit.list({ limit: 100 })).entries.map((e) => e.details)
}

const failing = (): RecordedChange => {
  throw new Error('the record cannot be written')
}

for (const engine of STORE_ENGINES) {
  describe(`recorded changes of pets and orders on ${engine.name}`, () => {
    test('a pet created: its record, made from the pet with its id, in the same transaction; a replay records nothing', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const plain = await storage.pets.createPet({ name: 'Rex', categoryId: 1 })
      const kept = await storage.pets.createPet({ name: 'Tom', categoryId: 1 }, ofPet)
      const claim = { scope: 'k:key_a', key: 'k1', fingerprint: 'f'.repeat(64), createdAt: T0 }
      const once = await storage.pets.createPetOnce({ name: 'Kit', categoryId: 1 }, claim, ofPet)
      assert.equal(once.outcome, 'created')
      const replay = await storage.pets.createPetOnce({ name: 'Kit', categoryId: 1 }, claim, ofPet)
      assert.equal(replay.outcome, 'replayed')
      const created = (once as { pet: Pet }).pet
      assert.deepEqual(await recorded(storage), [{ pet: kept.id }, { pet: created.id }], 'none without a record, none for a replay')
      assert.ok(plain.id < kept.id)

      // A record that cannot be written undoes the creation with it.
      await assert.rejects(storage.pets.createPet({ name: 'Lost', categoryId: 1 }, failing), /cannot be written/)
      assert.deepEqual(
        (await storage.pets.listPets({ limit: 10 })).map((p) => p.name),
        ['Rex', 'Tom', 'Kit'],
      )
    })

    test('an order placed, completed, cancelled: each its record; a refused change none', async (t) => {
      const storage = await engine.open(t, { holdClock: new ManualClock(T0) })
      if (!storage) return
      const { orders } = storage
      const a = (await storage.pets.createPet({ name: 'a', categoryId: 1, status: 'available' })).id
      const b = (await storage.pets.createPet({ name: 'b', categoryId: 1, status: 'available' })).id
      const first = await orders.placeOrder(order(a), undefined, ofOrder)
      const second = await orders.placeOrder(order(b), undefined, ofOrder)
      assert.equal(first.outcome, 'placed')
      assert.equal(second.outcome, 'placed')
      const [o1, o2] = [first, second].map((r) => (r as { order: OrderRecord }).order)
      assert.equal((await orders.placeOrder(order(a), undefined, ofOrder)).outcome, 'not_available')
      assert.equal((await orders.changeOrder(o1!.id, 'complete', { recorded: ofOrder })).outcome, 'changed')
      assert.equal((await orders.changeOrder(o2!.id, 'cancel', { recorded: ofOrder })).outcome, 'changed')
      assert.equal((await orders.changeOrder(o2!.id, 'cancel', { recorded: ofOrder })).outcome, 'not_placed')
      assert.deepEqual(await recorded(storage), [
        { order: o1!.id, status: 'placed' },
        { order: o2!.id, status: 'placed' },
        { order: o1!.id, status: 'completed' },
        { order: o2!.id, status: 'cancelled' },
      ])

      // A record that cannot be written undoes the placement, and its animal's hold.
      const c = (await storage.pets.createPet({ name: 'c', categoryId: 1, status: 'available' })).id
      await assert.rejects(orders.placeOrder(order(c), undefined, failing), /cannot be written/)
      assert.equal((await storage.pets.getPet(c))?.status, 'available')
      assert.equal((await orders.listOrders({ limit: 10 })).length, 2)
    })

    test('an order expired: by the sweep, and on the way of a change or of a new order for its animal, each with its record', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const pets: number[] = []
      for (const name of ['swept', 'changed', 'ordered again'])
        pets.push((await storage.pets.createPet({ name, categoryId: 1, status: 'available' })).id)
      const placed: OrderRecord[] = []
      for (const id of pets) placed.push(((await orders.placeOrder(order(id))) as { order: OrderRecord }).order)
      clock.advance(HOLD)

      assert.equal(await orders.expireDue(1, ofOrder), 1)
      const cancel = await orders.changeOrder(placed[1]!.id, 'cancel', { recorded: ofOrder })
      assert.deepEqual(cancel.outcome, 'not_placed', 'the hold ran out first: the cancel is refused, the expiry stays')
      const again = await orders.placeOrder(order(pets[2]!), undefined, ofOrder)
      assert.equal(again.outcome, 'placed')
      assert.deepEqual(await recorded(storage), [
        { order: placed[0]!.id, status: 'expired' },
        { order: placed[1]!.id, status: 'expired' },
        { order: placed[2]!.id, status: 'expired' },
        { order: (again as { order: OrderRecord }).order.id, status: 'placed' },
      ])
    })
  })
}
