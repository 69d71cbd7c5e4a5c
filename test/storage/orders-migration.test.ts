/**
 * Migration 008 on a catalogue the previous version left: the inventory's counts start as the
 * animals' (an animal without a status in none), every animal gets version 1, and the triggers
 * keep the counts from then on. Same assertions on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { holdRule } from '../../src/orders/hold.js'
import type { Storage } from '../../src/storage/storage.js'
import { type Engine, upgradedStore } from '../helpers/old-database.js'
import { petVersion } from '../orders/helpers.js'

/** The catalogue before the store: 5 available, 2 pending and 3 sold (created so), 2 without a status. */
const STATUSES = ['available', 'pending', 'sold', null, 'available', 'sold', 'available', 'pending', null, 'available', 'sold', 'available']
const INSERT = 'INSERT INTO pets (name, category_id, status) VALUES ($1, 1, $2)'

async function checkMigrated(storage: Storage): Promise<void> {
  assert.deepEqual(await storage.orders.inventory(), { available: 5, pending: 2, sold: 3 })
  for (let id = 1; id <= STATUSES.length; id++) assert.equal(await petVersion(storage, id), 1)
  await storage.pets.createPet({ name: 'new', categoryId: 1, status: 'sold' })
  await storage.pets.createPet({ name: 'new', categoryId: 1 })
  const placed = await storage.orders.placeOrder({ petId: 1, owner: 'k:x', keyId: 'x', holdEnds: holdRule(60_000) })
  assert.equal(placed.outcome, 'placed')
  assert.deepEqual(await storage.orders.inventory(), { available: 4, pending: 3, sold: 4 })
  // An animal created pending (POST /v1/pets takes any status) is not for sale: no order holds or frees it.
  assert.deepEqual(await storage.orders.placeOrder({ petId: 2, owner: 'k:x', keyId: 'x', holdEnds: holdRule(60_000) }), {
    outcome: 'not_available',
    petStatus: 'pending',
  })
}

for (const engine of ['sqlite', 'postgres'] as const satisfies Engine[]) {
  test(`migration 008 on ${engine}: the counts start as the animals’, versions at 1`, async (t) => {
    const old = await upgradedStore(
      t,
      engine,
      '008',
      async (run) => {
        for (const [i, status] of STATUSES.entries()) await run(INSERT, [`pet ${i}`, status])
      },
      { listen: false },
    )
    if (old) await checkMigrated(old.storage)
  })
}
