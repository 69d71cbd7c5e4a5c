import assert from 'node:assert/strict'
import { test } from 'node:test'
import { petCreated } from '../../src/pets/events.js'
import type { NewPet, Pet } from '../../src/pets/schemas.js'
import type { Storage } from '../../src/storage/storage.js'
import { postgresStoreAndClient } from '../helpers/stores.js'

const owner = (i: number) => ({ customerId: null, keyChainId: `key_chain${i}`, keyId: `key_${i}` })

/** Creates of one event-loop turn, each with its own owner's pet.created event. */
const createInOneTurn = (storage: Storage, pets: NewPet[]) =>
  Promise.allSettled(pets.map((pet, i) => storage.pets.createPet(pet, petCreated(owner(i), 1_700_000_000_000 + i))))

test('PostgreSQL: the creates of one event-loop turn are one transaction, each pet with its own id and its own event', async (t) => {
  const opened = await postgresStoreAndClient(t)
  if (opened === undefined) return
  const { storage, client: reader } = opened
  const asked: NewPet[] = [
    { name: 'a', categoryId: 1, status: 'available' },
    { name: 'b', categoryId: 9_007_199_254_740_993n },
    { name: 'c', categoryId: -4, status: 'sold' },
    { name: 'a', categoryId: 1, status: 'available' },
    // What an array literal would misread unquoted: NULL, quotes, a backslash, braces, a comma.
    { name: 'NULL', categoryId: 0 },
    { name: 'q"u\\o{t}e, d ü', categoryId: 5, status: 'pending' },
  ]
  const settled = await createInOneTurn(storage, asked)
  const created = settled.map((s) => (s.status === 'fulfilled' ? s.value : assert.fail(String(s.reason))))

  assert.deepEqual(
    created.map(({ id: _, ...rest }) => rest),
    asked,
    'each answer is its own request’s pet',
  )
  assert.equal(new Set(created.map((p) => p.id)).size, asked.length)
  for (const pet of created) assert.deepEqual(await storage.pets.getPet(pet.id), pet, 'the answer is the stored row')

  const { rows: writers } = await reader.query<{ n: string }>('SELECT count(DISTINCT changed_xid) AS n FROM pets')
  assert.equal(Number(writers[0]!.n), 1, 'one statement, one transaction, one commit')

  const { rows: events } = await reader.query<{ data: string; key_id: string }>(
    "SELECT data, key_id FROM events WHERE type = 'pet.created' ORDER BY seq",
  )
  assert.equal(events.length, asked.length)
  for (const [i, pet] of created.entries()) {
    const event = events.find((e) => e.key_id === owner(i).keyId)
    assert.ok(event, `the event of create ${i}`)
    const status = pet.status === undefined ? '' : `,"status":${JSON.stringify(pet.status)}`
    assert.equal(event.data, `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${status}}`)
  }
  assert.deepEqual(
    events.map((e) => e.key_id),
    asked.map((_, i) => owner(i).keyId),
    'events in the order the creates came',
  )
})

test('PostgreSQL: a create the database refuses for what it holds fails alone; the others of its turn are created', async (t) => {
  const opened = await postgresStoreAndClient(t)
  if (opened === undefined) return
  const { storage, client: reader } = opened
  const refused = { name: 'x', categoryId: 2, status: 'lost' } as unknown as Pet // against the table's CHECK: 23514
  const settled = await createInOneTurn(storage, [{ name: 'a', categoryId: 1 }, refused, { name: 'c', categoryId: 3, status: 'pending' }])
  assert.equal(settled[0]!.status, 'fulfilled')
  assert.equal(settled[1]!.status, 'rejected')
  assert.equal((settled[1] as PromiseRejectedResult).reason.code, '23514')
  assert.equal(settled[2]!.status, 'fulfilled')

  const { rows } = await reader.query<{ name: string }>('SELECT name FROM pets ORDER BY id')
  assert.deepEqual(
    rows.map((r) => r.name),
    ['a', 'c'],
  )
  const { rows: events } = await reader.query<{ key_id: string }>('SELECT key_id FROM events ORDER BY seq')
  assert.deepEqual(
    events.map((e) => e.key_id),
    [owner(0).keyId, owner(2).keyId],
    'no event without its pet',
  )
})

test('PostgreSQL: a failure that is no row’s fails every create of the turn with the database’s error, and writes nothing', async (t) => {
  const opened = await postgresStoreAndClient(t)
  if (opened === undefined) return
  const { storage, client: reader } = opened
  // The events table gone: every statement that writes an event is refused (42P01), whatever its row.
  await reader.query('ALTER TABLE events RENAME TO events_away')
  const settled = await createInOneTurn(storage, [
    { name: 'a', categoryId: 1 },
    { name: 'b', categoryId: 2 },
  ])
  for (const s of settled) {
    assert.equal(s.status, 'rejected')
    assert.equal((s as PromiseRejectedResult).reason.code, '42P01')
  }
  const { rows } = await reader.query<{ n: string }>('SELECT count(*) AS n FROM pets')
  assert.equal(Number(rows[0]!.n), 0)
})
