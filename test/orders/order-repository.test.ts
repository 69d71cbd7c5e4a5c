/**
 * The order repository's contract, the same assertions on SQLite and on PostgreSQL: the state
 * machines of src/orders/state.ts as the stores enforce them, the counts of the inventory, the
 * versions of the rows, and what an Idempotency-Key record holds. Time is the store's hold clock,
 * a manual one here on both engines (the database's own, on PostgreSQL, is
 * test/orders/hold-clock.test.ts).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { holdRule } from '../../src/orders/hold.js'
import type { NewOrder, OrderRepository } from '../../src/orders/repository.js'
import type { PetStatus } from '../../src/pets/schemas.js'
import { ManualClock } from '../../src/shared/clock.js'
import type { Storage } from '../../src/storage/storage.js'
import { STORE_ENGINES } from '../helpers/stores.js'
import { petVersion, rawQuery } from './helpers.js'

const HOLD = 30 * 60_000
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0)

const order = (petId: number, over: Partial<NewOrder> = {}): NewOrder => ({
  petId,
  owner: 'k:key_a',
  keyId: 'key_a',
  holdEnds: holdRule(HOLD),
  ...over,
})

async function pet(storage: Storage, status?: PetStatus): Promise<number> {
  return (await storage.pets.createPet({ name: 'Rex', categoryId: 7, ...(status === undefined ? {} : { status }) })).id
}

async function placed(orders: OrderRepository, petId: number, over: Partial<NewOrder> = {}) {
  const result = await orders.placeOrder(order(petId, over))
  assert.equal(result.outcome, 'placed', JSON.stringify(result))
  return (result as { order: { id: number } }).order
}

for (const engine of STORE_ENGINES) {
  describe(`orders on ${engine.name}`, () => {
    test('a placement holds an available animal; refusals name why and change nothing', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const rex = await pet(storage, 'available')
      const sold = await pet(storage, 'sold')
      const unlisted = await pet(storage)
      const first = await orders.placeOrder(order(rex))
      assert.equal(first.outcome, 'placed')
      const o = (first as Extract<typeof first, { outcome: 'placed' }>).order
      assert.deepEqual(
        {
          petId: o.petId,
          status: o.status,
          owner: o.owner,
          keyId: o.keyId,
          createdAt: o.createdAt,
          expiresAt: o.expiresAt,
          endedAt: o.endedAt,
        },
        { petId: rex, status: 'placed', owner: 'k:key_a', keyId: 'key_a', createdAt: T0, expiresAt: T0 + HOLD, endedAt: null },
      )
      assert.equal((await storage.pets.getPet(rex))?.status, 'pending')
      assert.deepEqual(await orders.placeOrder(order(rex)), { outcome: 'not_available', petStatus: 'pending' })
      assert.deepEqual(await orders.placeOrder(order(sold)), { outcome: 'not_available', petStatus: 'sold' })
      assert.deepEqual(await orders.placeOrder(order(unlisted)), { outcome: 'not_available', petStatus: null })
      assert.deepEqual(await orders.placeOrder(order(999_999)), { outcome: 'unknown_pet' })
      assert.deepEqual(await orders.placeOrder(order(9_223_372_036_854_775_807n as unknown as number)), { outcome: 'unknown_pet' })
      assert.deepEqual(await orders.placeOrder(order(18_446_744_073_709_551_615n as unknown as number)), { outcome: 'unknown_pet' })
      assert.equal((await orders.listOrders({ limit: 10 })).length, 1, 'a refusal writes no order')
      assert.deepEqual(await orders.inventory(), { available: 0, pending: 1, sold: 1 }, 'an animal without a status is counted nowhere')
    })

    test("the hold's end is the placement's rule applied to the store's time of the placement", async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const seen: number[] = []
      const holdEnds = (placedAt: number) => {
        seen.push(placedAt)
        return placedAt + 7_000
      }
      const result = await storage.orders.placeOrder(order(await pet(storage, 'available'), { holdEnds }))
      assert.equal(result.outcome, 'placed')
      const { createdAt, expiresAt } = (result as Extract<typeof result, { outcome: 'placed' }>).order
      assert.deepEqual(seen, [T0], 'asked once, with the time the store placed the order at')
      assert.deepEqual([createdAt, expiresAt], [T0, T0 + 7_000])
      clock.set(T0 + 7_000)
      assert.equal(await storage.orders.expireDue(10), 1, 'due at the end the rule gave')
    })

    test('cancel makes the animal available, complete sells it; only a placed order changes', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const [a, b] = [await pet(storage, 'available'), await pet(storage, 'available')]
      const oa = await placed(orders, a)
      const ob = await placed(orders, b)
      clock.set(T0 + 1000)
      const cancelled = await orders.changeOrder(oa.id, 'cancel', { owner: 'k:key_a' })
      assert.equal(cancelled.outcome, 'changed')
      assert.deepEqual(
        [
          (cancelled as { order: { status: string; endedAt: number } }).order.status,
          (cancelled as { order: { endedAt: number } }).order.endedAt,
        ],
        ['cancelled', T0 + 1000],
      )
      clock.set(T0 + 2000)
      const completed = await orders.changeOrder(ob.id, 'complete', { owner: 'k:key_a' })
      assert.equal((completed as { order: { status: string } }).order.status, 'completed')
      clock.set(T0 + 3000)
      assert.deepEqual([(await storage.pets.getPet(a))?.status, (await storage.pets.getPet(b))?.status], ['available', 'sold'])
      for (const [id, change] of [
        [oa.id, 'complete'],
        [oa.id, 'cancel'],
        [ob.id, 'cancel'],
        [ob.id, 'complete'],
      ] as const) {
        const again = await orders.changeOrder(id, change, { owner: 'k:key_a' })
        assert.equal(again.outcome, 'not_placed')
      }
      assert.deepEqual(await orders.inventory(), { available: 1, pending: 0, sold: 1 })
      // The animal of a cancelled order can be ordered again; a sold one cannot.
      clock.set(T0 + 4000)
      await placed(orders, a)
      assert.deepEqual(await orders.placeOrder(order(b)), { outcome: 'not_available', petStatus: 'sold' })
    })

    test('a change with its audit entry writes both in one transaction, or neither', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const actor = { type: 'admin_token' as const, id: 'adm_test' }
      const entry = (o: { id: number; keyId: string | null }) => ({
        audit: [{ at: T0, actor, action: 'order.cancel' as const, keyId: o.keyId, details: { orderId: String(o.id) }, requestId: 'r1' }],
      })
      const kept = await placed(orders, await pet(storage, 'available'))
      const cancelled = await orders.changeOrder(kept.id, 'cancel', { recorded: entry })
      assert.equal(cancelled.outcome, 'changed')
      const written = await storage.audit.list({ limit: 10, action: 'order.cancel' })
      assert.deepEqual(
        written.entries.map((e) => [e.keyId, e.details, e.requestId]),
        [['key_a', { orderId: String(kept.id) }, 'r1']],
      )
      // An entry that cannot be written (here: its builder throws) undoes the change with it.
      const otherPet = await pet(storage, 'available')
      const other = await placed(orders, otherPet)
      await assert.rejects(
        orders.changeOrder(other.id, 'cancel', {
          recorded: () => {
            throw new Error('audit log unavailable')
          },
        }),
        /audit log unavailable/,
      )
      assert.equal((await orders.getOrder(other.id))?.status, 'placed', 'the order is still placed')
      assert.equal((await storage.pets.getPet(otherPet))?.status, 'pending', 'its animal still held')
      assert.equal((await storage.audit.list({ limit: 10, action: 'order.cancel' })).entries.length, 1)
      // A refused change writes no entry.
      assert.equal((await orders.changeOrder(kept.id, 'cancel', { recorded: entry })).outcome, 'not_placed')
      assert.equal((await storage.audit.list({ limit: 10, action: 'order.cancel' })).entries.length, 1)
    })

    test("an order is its owner's: someone else's is not found, and nothing changes", async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const o = await placed(orders, await pet(storage, 'available'))
      assert.deepEqual(await orders.changeOrder(o.id, 'cancel', { owner: 'k:someone' }), { outcome: 'not_found' })
      assert.equal(await orders.getOrder(o.id, { owner: 'k:someone' }), undefined)
      assert.equal((await orders.getOrder(o.id, { owner: 'k:key_a' }))?.status, 'placed')
      assert.equal((await orders.getOrder(o.id))?.status, 'placed', 'without an owner (operators): any order')
      assert.deepEqual(await orders.changeOrder(424_242, 'cancel', {}), { outcome: 'not_found' })
      assert.deepEqual(await orders.changeOrder((2n ** 70n) as unknown as number, 'cancel', {}), { outcome: 'not_found' })
    })

    test('a hold that ran out: a cancel or complete finds the order expired, a new order takes the animal', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const [a, b] = [await pet(storage, 'available'), await pet(storage, 'available')]
      const oa = await placed(orders, a)
      const ob = await placed(orders, b)
      const after = T0 + HOLD
      clock.set(after)
      const refused = await orders.changeOrder(oa.id, 'complete', { owner: 'k:key_a' })
      assert.equal(refused.outcome, 'not_placed')
      assert.deepEqual(
        [
          (refused as { order: { status: string; endedAt: number } }).order.status,
          (refused as { order: { endedAt: number } }).order.endedAt,
        ],
        ['expired', after],
      )
      assert.equal((await storage.pets.getPet(a))?.status, 'available', 'expired on the way, not sold')
      const other = await orders.placeOrder(order(b, { owner: 'k:key_b', keyId: 'key_b' }))
      assert.equal(other.outcome, 'placed', 'the hold of order b ran out: the animal goes to the new order')
      assert.equal((await orders.getOrder(ob.id))?.status, 'expired')
      // One millisecond before the end, the hold still holds.
      const c = await pet(storage, 'available')
      clock.set(T0)
      const oc = await placed(orders, c)
      clock.set(T0 + HOLD - 1)
      assert.equal((await orders.changeOrder(oc.id, 'complete', {})).outcome, 'changed')
      assert.deepEqual(await orders.inventory(), { available: 1, pending: 1, sold: 1 })
    })

    test('the sweep expires each due order once, with its animal, in batches', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const due: number[] = []
      for (let i = 0; i < 5; i++) {
        clock.set(T0 + i)
        due.push((await placed(orders, await pet(storage, 'available'))).id)
      }
      clock.set(T0 + HOLD)
      const later = await placed(orders, await pet(storage, 'available'))
      clock.set(T0 + HOLD + 2)
      assert.equal(await orders.expireDue(2), 2, 'a batch is bounded')
      clock.set(T0 + HOLD + 10)
      assert.equal(await orders.expireDue(100), 3)
      assert.equal(await orders.expireDue(100), 0, 'nothing is expired twice')
      for (const id of due) assert.equal((await orders.getOrder(id))?.status, 'expired')
      assert.equal((await orders.getOrder(later.id))?.status, 'placed')
      assert.deepEqual(await orders.inventory(), { available: 5, pending: 1, sold: 0 })
      assert.deepEqual(
        (await orders.listOrders({ limit: 10, status: 'expired' })).map((o) => o.endedAt),
        [T0 + HOLD + 2, T0 + HOLD + 2, T0 + HOLD + 10, T0 + HOLD + 10, T0 + HOLD + 10],
      )
    })

    test('pages by owner, key and status, in id order from `after`, ascending or newest first', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const ids: number[] = []
      for (let i = 0; i < 6; i++) {
        const owner = i % 2 === 0 ? 'k:a' : 'k:b'
        ids.push((await placed(orders, await pet(storage, 'available'), { owner, keyId: `key_${i % 3}` })).id)
      }
      await orders.changeOrder(ids[2]!, 'cancel', {})
      const of = (o: { id: number }[]) => o.map((x) => ids.indexOf(x.id))
      assert.deepEqual(of(await orders.listOrders({ limit: 10, owner: 'k:a' })), [0, 2, 4])
      assert.deepEqual(of(await orders.listOrders({ limit: 2, owner: 'k:a' })), [0, 2])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, owner: 'k:a', afterId: ids[2]! })), [4])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, owner: 'k:a', status: 'placed' })), [0, 4])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, status: 'cancelled' })), [2])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, keyId: 'key_1' })), [1, 4])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, keyId: 'key_2', owner: 'k:a', status: 'cancelled' })), [2])
      assert.deepEqual(await orders.listOrders({ limit: 10, afterId: (2n ** 64n) as unknown as number }), [])
      // Newest first (the operator console's default), paged the other way from `after`.
      const desc = { order: 'desc' } as const
      assert.deepEqual(of(await orders.listOrders({ limit: 10, ...desc })), [5, 4, 3, 2, 1, 0])
      assert.deepEqual(of(await orders.listOrders({ limit: 2, owner: 'k:a', ...desc })), [4, 2])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, owner: 'k:a', afterId: ids[4]!, ...desc })), [2, 0])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, keyId: 'key_1', status: 'placed', ...desc })), [4, 1])
      assert.deepEqual(of(await orders.listOrders({ limit: 10, status: 'cancelled', afterId: ids[2]!, ...desc })), [])
      assert.deepEqual(of(await orders.listOrders({ limit: 1, afterId: (2n ** 64n) as unknown as number, ...desc })), [5])
      assert.deepEqual(await orders.listOrders({ limit: 10, afterId: -(2n ** 64n) as unknown as number, ...desc }), [])
    })

    test('every change moves the rows’ versions; the one-placed-order-per-animal index holds whatever the code does', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const rex = await pet(storage, 'available')
      assert.equal(await petVersion(storage, rex), 1)
      const o = await placed(orders, rex)
      assert.equal(await petVersion(storage, rex), 2)
      assert.equal((await orders.getOrder(o.id))?.version, 1)
      const done = await orders.changeOrder(o.id, 'cancel', {})
      assert.equal((done as { order: { version: number } }).order.version, 2)
      assert.equal(await petVersion(storage, rex), 3)
      await placed(orders, rex)
      await assert.rejects(
        rawQuery(
          storage,
          `INSERT INTO orders (pet_id, status, owner, key_id, created_at, expires_at) VALUES (${rex}, 'placed', 'x', 'x', 0, 0)`,
        ),
        /unique|UNIQUE/,
      )
    })

    test('an Idempotency-Key record: replayed with the same body, reused otherwise (also a key of a pet create)', async (t) => {
      const clock = new ManualClock(T0)
      const storage = await engine.open(t, { holdClock: clock })
      if (!storage) return
      const { orders } = storage
      const [a, b] = [await pet(storage, 'available'), await pet(storage, 'available')]
      const claim = { scope: 'key_a', key: 'k1', fingerprint: 'f-a', createdAt: T0 }
      const first = await orders.placeOrder(order(a), claim)
      assert.equal(first.outcome, 'placed')
      const id = (first as { order: { id: number } }).order.id
      clock.set(T0 + 1)
      await orders.changeOrder(id, 'complete', {})
      const again = await orders.placeOrder(order(a), claim)
      assert.equal(again.outcome, 'replayed')
      assert.equal((again as { order: { id: number; status: string } }).order.id, id)
      assert.deepEqual(await orders.placeOrder(order(b), { ...claim, fingerprint: 'f-b' }), { outcome: 'reused' })
      assert.equal((await storage.pets.getPet(b))?.status, 'available', 'a reuse changes nothing')
      const created = await storage.pets.createPetOnce({ name: 'Max', categoryId: 1 }, { ...claim, key: 'k2', fingerprint: 'f-pet' })
      assert.equal(created.outcome, 'created')
      assert.deepEqual(await orders.placeOrder(order(b), { ...claim, key: 'k2' }), { outcome: 'reused' })
      assert.equal((await storage.pets.createPetOnce({ name: 'Max', categoryId: 1 }, claim)).outcome, 'reused')
      // A refusal records nothing: the key is free for the retry.
      const unknown = await orders.placeOrder(order(999_999), { ...claim, key: 'k3', fingerprint: 'f-x' })
      assert.equal(unknown.outcome, 'unknown_pet')
      assert.equal((await orders.placeOrder(order(b), { ...claim, key: 'k3', fingerprint: 'f-b' })).outcome, 'placed')
      assert.equal(await storage.pets.deleteIdempotencyRecords(T0 + 1), 3, 'one table, one sweep')
    })
  })
}
