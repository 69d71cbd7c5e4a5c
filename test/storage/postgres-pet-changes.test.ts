import assert from 'node:assert/strict'
import { test } from 'node:test'
import { holdRule } from '../../src/orders/hold.js'
import type { PetRepository } from '../../src/pets/repository.js'
import { upgradedStore } from '../helpers/old-database.js'
import { postgresStoreAndClient } from '../helpers/stores.js'

/** The store's petChangesSince, from `mark`: the lowest id it reports and the next mark. */
async function since(pets: PetRepository, mark: string | undefined) {
  return pets.petChangesSince!(mark)
}

test('PostgreSQL tells which pets commits wrote since a mark: creates, changes of status, a lower id that commits last', async (t) => {
  const opened = await postgresStoreAndClient(t)
  if (opened === undefined) return
  const { storage, client: other } = opened
  const { pets } = storage

  const first = await since(pets, undefined)
  assert.equal(first.lowestId, undefined, 'no mark: nothing to compare with')
  const a = await pets.createPet({ name: 'a', categoryId: 1, status: 'available' })
  const afterA = await since(pets, first.mark)
  assert.equal(afterA.lowestId, a.id)
  const quiet = await since(pets, afterA.mark)
  assert.equal(quiet.lowestId, undefined, 'nothing committed since')

  // Another instance's insert takes its id first and commits after a later one.
  await other.query('BEGIN')
  const [{ id: early }] = (await other.query<{ id: string }>("INSERT INTO pets (name, category_id) VALUES ('early', 1) RETURNING id"))
    .rows as [{ id: string }]
  const late = await pets.createPet({ name: 'late', categoryId: 1 })
  assert.ok(Number(early) < Number(late.id))
  const beforeCommit = await since(pets, quiet.mark)
  assert.equal(beforeCommit.lowestId, late.id, 'the uncommitted insert is not seen')
  await other.query('COMMIT')
  const afterCommit = await since(pets, beforeCommit.mark)
  assert.equal(afterCommit.lowestId, Number(early), 'the lower id is seen when it commits, after a mark that saw a higher one')

  // A change of status, whichever statement makes it (the trigger sets the writer).
  const placed = await storage.orders.placeOrder({ petId: a.id, owner: 'k:x', keyId: 'x', holdEnds: holdRule(60_000) })
  assert.equal(placed.outcome, 'placed')
  const afterOrder = await since(pets, afterCommit.mark)
  assert.equal(afterOrder.lowestId, a.id)
  await other.query("UPDATE pets SET name = 'renamed' WHERE id = $1", [late.id])
  const afterUpdate = await since(pets, afterOrder.mark)
  assert.equal(afterUpdate.lowestId, late.id)

  // Many writes since a mark: the answer is every pet (0), not a long read.
  await other.query("INSERT INTO pets (name, category_id) SELECT 'bulk', 1 FROM generate_series(1, 1001)")
  assert.equal((await since(pets, afterUpdate.mark)).lowestId, 0)
})

test('pets written before migration 026 count as older than any mark until they change', async (t) => {
  const old = await upgradedStore(t, 'postgres', '026', async (run) => {
    await run("INSERT INTO pets (name, category_id, status) VALUES ('old', 1, 'available')")
  })
  if (old === undefined) return
  const { pets } = old.storage
  const mark = (await since(pets, undefined)).mark
  assert.equal((await since(pets, mark)).lowestId, undefined)
  await old.run("UPDATE pets SET status = 'sold' WHERE id = 1")
  assert.equal((await since(pets, mark)).lowestId, 1)
})
