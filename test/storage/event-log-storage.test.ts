/**
 * The event log's storage (migration 020, storage/*\/event-repository.ts, writeChange), the same
 * on SQLite and PostgreSQL: a change and its events commit together or not at all (a failure
 * after the event's insert leaves neither); an event with a once-key is written once; the
 * retention sweep deletes exactly the events past it, once, however many sweep at the same time;
 * and migration 020 is applied to a database that has 021 already.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import pg from 'pg'
import { type EventDraft, type EventRepository, eventDraft } from '../../src/events/event.js'
import { EventRetention } from '../../src/events/retention.js'
import { holdRule } from '../../src/orders/hold.js'
import type { NewOrder } from '../../src/orders/repository.js'
import { ManualClock } from '../../src/shared/clock.js'
import { Db } from '../../src/storage/postgres/connection.js'
import { PostgresEventRepository } from '../../src/storage/postgres/event-repository.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { openMigrated } from '../../src/storage/sqlite/open-database.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema, STORE_ENGINES } from '../helpers/stores.js'

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0)
const DAY = 86_400_000
const OWNER = { customerId: null, keyChainId: 'key_a', keyId: 'key_a' }
const order = (petId: number): NewOrder => ({ petId, owner: 'k:key_a', keyId: 'key_a', holdEnds: holdRule(60_000) })
const all = async (storage: Storage) => (await storage.events.list({ limit: 100 })).events

for (const engine of STORE_ENGINES) {
  describe(`the event log's storage on ${engine.name}`, () => {
    test('outbox: a change whose transaction fails after its event is inserted leaves neither', async (t) => {
      const storage = await engine.open(t, { holdClock: new ManualClock(T0) })
      if (!storage) return
      const petId = (await storage.pets.createPet({ name: 'Rex', categoryId: 1, status: 'available' })).id
      const event = eventDraft('pet.created', OWNER, T0, { id: 0 })
      // The second insert of one id fails after the first succeeded, in the placement's transaction.
      const failing = () => ({ audit: [], events: [event, event] })
      await assert.rejects(storage.orders.placeOrder(order(petId), undefined, failing))
      assert.deepEqual(await all(storage), [], 'no event')
      assert.deepEqual(await storage.orders.listOrders({ limit: 10 }), [], 'no order')
      assert.equal((await storage.pets.getPet(petId))?.status, 'available', 'the animal not held')
      // The same change without the failure: the order and its event.
      const placed = await storage.orders.placeOrder(order(petId))
      assert.equal(placed.outcome, 'placed')
      assert.deepEqual(
        (await all(storage)).map((e) => [e.type, JSON.parse(e.data).id]),
        [['order.placed', (placed as { order: { id: number } }).order.id]],
      )
    })

    test('an event with a once-key is written once; the rest of its change is kept', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const once = (n: number): EventDraft => eventDraft('key.usage_threshold', OWNER, T0 + n, { n }, 'threshold:k:key_a:day:80')
      await Promise.all([1, 2, 3].map((n) => storage.audit.write({ audit: [], events: [once(n)] })))
      await storage.audit.write({ audit: [], events: [once(4), eventDraft('key.banned', OWNER, T0, { n: 5 })] })
      assert.deepEqual(
        (await all(storage)).map((e) => e.type),
        ['key.usage_threshold', 'key.banned'],
      )
    })

    test('retention: the events past it are deleted, in batches, once, by sweeps at the same time', async (t) => {
      const storage = await engine.open(t)
      if (!storage) return
      const old = Array.from({ length: 2500 }, (_, i) => eventDraft('pet.created', OWNER, T0 - 31 * DAY + i, { i }))
      for (let i = 0; i < old.length; i += 500) await storage.audit.write({ audit: [], events: old.slice(i, i + 500) })
      const kept = eventDraft('pet.created', OWNER, T0 - 29 * DAY, { kept: true })
      await storage.audit.write({ audit: [], events: [kept] })
      const clock = new ManualClock(T0)
      const sweeps = [1, 2, 3].map(() => new EventRetention(storage.events, { keepMs: 30 * DAY, clock }))
      const deleted = await Promise.all(sweeps.map((s) => s.run()))
      assert.equal(
        deleted.reduce((a, b) => a + b, 0),
        old.length,
        'each event deleted by one sweep',
      )
      assert.equal(await sweeps[0]!.run(), 0)
      assert.deepEqual(
        (await all(storage)).map((e) => e.id),
        [kept.id],
      )
    })
  })
}

test('migration 020 is applied to a SQLite database that has 021 already (applied by name)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-migration-'))
  try {
    const file = join(dir, 'store.db')
    const db = openMigrated(file, 'process')
    // A database of the release before: 021 applied, no 020 (nor 023, whose deliveries refer to events).
    db.exec(
      `DROP TABLE webhook_delivery_attempts; DROP TABLE webhook_deliveries; DROP TABLE events;
       DELETE FROM schema_migrations WHERE version IN ('020_events.sql', '023_webhook_deliveries.sql')`,
    )
    db.close()
    const again = openMigrated(file, 'process')
    const applied = again.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: string }>
    assert.ok(applied.some((r) => r.version === '020_events.sql'))
    assert.ok(applied.some((r) => r.version === '021_webhook_endpoints.sql'))
    assert.equal((again.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n, 0)
    again.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('migration 020 is applied to a PostgreSQL schema that has 021 already (applied by name)', async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const schema = `test_${randomBytes(6).toString('hex')}`
  t.after(() => dropSchema(schema))
  await (await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })).close()
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    // A database of the release before: 021 applied, no 020 (nor 023, whose deliveries refer to events).
    await client.query(
      `DROP TABLE ${schema}.webhook_delivery_attempts, ${schema}.webhook_deliveries, ${schema}.events;
       DELETE FROM ${schema}.schema_migrations WHERE version IN ('020_events.sql', '023_webhook_deliveries.sql', '024_events_commit_order.sql')`,
    )
    const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    await storage.audit.write({ audit: [], events: [eventDraft('pet.created', OWNER, T0, { id: 1 })] })
    assert.equal((await storage.events.list({ limit: 10 })).events.length, 1)
    await storage.close()
    const { rows } = await client.query(`SELECT version FROM ${schema}.schema_migrations WHERE version LIKE '02%' ORDER BY version`)
    assert.deepEqual(
      rows.map((r) => r.version),
      [
        '020_events.sql',
        '021_webhook_endpoints.sql',
        '022_audit_event_reads.sql',
        '023_webhook_deliveries.sql',
        '024_events_commit_order.sql',
        '025_webhook_endpoint_cursors.sql',
        '026_pets_changed_xid.sql',
      ],
    )
  } finally {
    await client.end()
  }
})

describe('the event log on PostgreSQL, with a writer that took its seq and commits later', () => {
  /** A schema, its storage, and a second connection to it: the writer in flight. */
  async function twoWriters(t: TestContext) {
    if (!(await requireService(t, 'PostgreSQL'))) return undefined
    const schema = `test_${randomBytes(6).toString('hex')}`
    const storage = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const slow = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
    const pool = new pg.Pool({ connectionString: PG_URL, options: `-c search_path=${schema}`, max: 2 })
    t.after(async () => {
      await slow.end().catch(() => {})
      await pool.end()
      await storage.close()
      await dropSchema(schema)
    })
    await slow.connect()
    // A listing that waits long enough for the slow writer's commit on a loaded machine;
    // storage.events has the service's wait, `impatient` none (what the horizon alone shows).
    const patient = new PostgresEventRepository(new Db(pool), 30_000)
    const impatient = new PostgresEventRepository(new Db(pool), 0)
    /** Begins the slow writer's change: its event takes its seq now and commits with `COMMIT`. */
    const begin = async (id: string) => {
      await slow.query('BEGIN')
      const { rows } = await slow.query(
        `INSERT INTO events (id, type, occurred_at, data, customer_id, key_chain_id, key_id)
         VALUES ($1, 'pet.created', ${T0}, '{}', NULL, 'key_a', 'key_a') RETURNING seq`,
        [id],
      )
      return Number(rows[0].seq)
    }
    const seqOf = async (id: string) => Number((await slow.query('SELECT seq FROM events WHERE id = $1', [id])).rows[0].seq)
    return { storage, slow, pool, begin, patient, impatient, seqOf }
  }

  test("a poller's cursor never passes an event that commits after a newer one (regression: it skipped it)", async (t) => {
    const setup = await twoWriters(t)
    if (!setup) return
    const { storage, slow, begin, patient, seqOf } = setup
    const seen: string[] = []
    let cursor: number | undefined
    /** What a client that polls does: reads from its cursor, keeps the last event it was shown. */
    const poll = async (events: EventRepository) => {
      const page = await events.list({ limit: 10, ...(cursor === undefined ? {} : { after: cursor }) })
      seen.push(...page.events.map((e) => e.id))
      cursor = page.events.at(-1)?.seq ?? cursor
    }
    const first = eventDraft('pet.created', OWNER, T0, { n: 1 })
    await storage.audit.write({ audit: [], events: [first] })
    await poll(patient)
    const slowSeq = await begin('evt_slow')
    const fast = eventDraft('pet.created', OWNER, T0, { n: 3 })
    await storage.audit.write({ audit: [], events: [fast] })
    assert.ok(slowSeq < (await seqOf(fast.id)), 'the slow writer took the lower seq')
    await poll(storage.events) // the slow writer is still open after the service's wait
    assert.deepEqual(seen, [first.id], 'nothing past the open writer is shown')
    await slow.query('COMMIT')
    await poll(patient)
    assert.deepEqual(seen, [first.id, 'evt_slow', fast.id], 'each event once, the one committed later included')
  })

  test('a listing waits for the writer that holds it back, and then shows both', async (t) => {
    const setup = await twoWriters(t)
    if (!setup) return
    const { storage, slow, begin, patient } = setup
    await begin('evt_slow')
    const fast = eventDraft('pet.created', OWNER, T0, { n: 2 })
    await storage.audit.write({ audit: [], events: [fast] })
    const committing = new Promise((resolve) => setTimeout(resolve, 100)).then(() => slow.query('COMMIT'))
    const page = await patient.list({ limit: 10 })
    await committing
    assert.deepEqual(
      page.events.map((e) => e.id),
      ['evt_slow', fast.id],
    )
    assert.equal(page.nextAfter, null)
  })

  test('a page ends before the open writer: the page is whole, its cursor the last event shown', async (t) => {
    const setup = await twoWriters(t)
    if (!setup) return
    const { storage, slow, begin, patient } = setup
    const before = Array.from({ length: 3 }, (_, n) => eventDraft('pet.created', OWNER, T0, { n }))
    await storage.audit.write({ audit: [], events: before })
    await begin('evt_slow')
    await storage.audit.write({ audit: [], events: [eventDraft('pet.created', OWNER, T0, { n: 9 })] })
    const page = await patient.list({ limit: 2 })
    assert.deepEqual(
      page.events.map((e) => e.id),
      before.slice(0, 2).map((e) => e.id),
    )
    // Settled once the other tests' transactions older than it have ended (the patient wait).
    const settled = await patient.list({ limit: 1, after: page.nextAfter! })
    assert.deepEqual(
      settled.events.map((e) => e.id),
      [before[2]!.id],
    )
    const rest = await storage.events.list({ limit: 2, after: page.nextAfter! })
    assert.deepEqual(
      rest.events.map((e) => e.id),
      [before[2]!.id],
      'the settled one, then the page ends at the open writer',
    )
    assert.equal(rest.nextAfter, rest.events[0]!.seq, 'more may come: the next page starts after it')
    await slow.query('COMMIT')
  })

  test('a transaction with an xid that holds no lock on the log does not hold a listing back, here or in another schema (regression: any xid on the server did)', async (t) => {
    const setup = await twoWriters(t)
    if (!setup) return
    const { storage, slow, impatient } = setup
    const elsewhere = new pg.Client({ connectionString: PG_URL })
    await elsewhere.connect()
    t.after(() => elsewhere.end())
    for (const open of [slow, elsewhere]) {
      await open.query('BEGIN')
      await open.query('SELECT pg_current_xact_id()')
    }
    const event = eventDraft('pet.created', OWNER, T0, { n: 1 })
    await storage.audit.write({ audit: [], events: [event] })
    const page = await impatient.list({ limit: 10 })
    assert.deepEqual(
      page.events.map((e) => e.id),
      [event.id],
    )
    for (const open of [slow, elsewhere]) await open.query('COMMIT')
  })

  test("a transaction of the service's holds a listing back from its BEGIN, before it has written anything", async (t) => {
    const setup = await twoWriters(t)
    if (!setup) return
    const { storage, pool, impatient, patient } = setup
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let began!: () => void
    const begun = new Promise<void>((resolve) => (began = resolve))
    const open = new Db(pool).transaction(async (client) => {
      await client.query('SELECT pg_current_xact_id()')
      began()
      await released
    })
    await begun
    const event = eventDraft('pet.created', OWNER, T0, { n: 2 })
    try {
      await storage.audit.write({ audit: [], events: [event] })
      assert.deepEqual((await impatient.list({ limit: 10 })).events, [], 'it may still write an event that comes before')
    } finally {
      release()
      await open
    }
    assert.deepEqual(
      (await patient.list({ limit: 10 })).events.map((e) => e.id),
      [event.id],
    )
  })
})
