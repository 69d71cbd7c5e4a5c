/**
 * A 201 means the animal is durable against a crash of the process (fault injection): 24
 * concurrent writers keep creating animals while the server is SIGKILLed, and restarted on the
 * same data each time. The kill lands at a random moment (200-1500 ms into a round), or (first
 * round on SQLite) right after the last 201 of a burst of 200 concurrent creates, with the
 * writers' creates still in flight. After every crash:
 *
 * - the store as the crash left it (SQLite: the file opened read-only with `PRAGMA integrity_check`;
 *   PostgreSQL: the table read directly, indexes verified with amcheck when available) holds every
 *   animal that got a 201, unchanged, and nothing that was not sent;
 * - through the restarted server, paging lists exactly the rows of the store, each id once, and
 *   every acknowledged animal unchanged; a new create gets an id no row had.
 *
 * Run on SQLite (DURABILITY=process, the default), SQLite with DURABILITY=power, and PostgreSQL
 * (a scratch database).
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import Database from 'better-sqlite3'
import { requireService } from '../../helpers/services.js'
import { useScratchDatabase, withPg } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, request, type ServerProcess, sleep, startServer, useTempDir } from '../helpers/process.js'

interface Pet {
  id: number
  name: string
  categoryId: number
  status?: string
}
type NewPet = Omit<Pet, 'id'>

const WRITERS = 24
/** Creates sent at once in a burst round; the kill follows the last of their 201s. */
const BURST = 200
const STATUSES = ['available', 'pending', 'sold', undefined] as const
/**
 * Kill moments: uniformly random in [KILL_MIN_MS, KILL_MAX_MS) after the round's first 201 (not
 * after the writers start: on a busy machine a fresh server's first answers can take longer than
 * KILL_MIN_MS, and a round killed before any 201 proves nothing).
 */
const KILL_MIN_MS = 200
const KILL_MAX_MS = 1500

interface StoreSnapshot {
  rows: Map<number, Pet>
  /** 'ok' or a description of what is wrong. */
  integrity: string
  /** How integrity was checked. */
  method: string
}

interface Ledger {
  /** id -> the body of its 201. */
  acknowledged: Map<number, Pet>
  /** name -> what was sent (names are unique). */
  sent: Map<string, NewPet>
  /** Acknowledged animals verified (in the raw store and through the API), summed over every check. */
  verifications: number
  crashes: number
}

function newLedger(): Ledger {
  return { acknowledged: new Map(), sent: new Map(), verifications: 0, crashes: 0 }
}

function toPet(r: { id: number | string; name: string; category_id: number | string; status: string | null }): Pet {
  const pet: Pet = { id: Number(r.id), name: r.name, categoryId: Number(r.category_id) }
  if (r.status !== null) pet.status = r.status
  return pet
}

function sqliteSnapshot(db: string): StoreSnapshot {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true })
  try {
    const integrity = (sqlite.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ')
    const rows = new Map<number, Pet>()
    for (const r of sqlite.prepare('SELECT id, name, category_id, status FROM pets ORDER BY id').all() as Parameters<typeof toPet>[0][]) {
      rows.set(Number(r.id), toPet(r))
    }
    return { integrity, rows, method: 'PRAGMA integrity_check (file opened read-only after the kill)' }
  } finally {
    sqlite.close()
  }
}

async function postgresSnapshot(url: string): Promise<StoreSnapshot> {
  return withPg(url, async (c) => {
    const rows = new Map<number, Pet>()
    for (const r of (await c.query('SELECT id, name, category_id, status FROM pets ORDER BY id')).rows) rows.set(Number(r.id), toPet(r))
    // Heap and indexes agree: amcheck (contrib) when the server has it, else index-only vs heap counts.
    let integrity = 'ok'
    let method = 'amcheck bt_index_check(heapallindexed) on both indexes'
    try {
      await c.query('CREATE EXTENSION IF NOT EXISTS amcheck')
      await c.query(`SELECT bt_index_check('pets_pkey'::regclass, true), bt_index_check('pets_status_id'::regclass, true)`)
    } catch (error) {
      const message = (error as Error).message
      if (!/amcheck|extension|control file/i.test(message)) integrity = `amcheck: ${message}`
      else {
        method = 'index scan count = heap row count (amcheck not installed)'
        await c.query('SET enable_seqscan = off')
        const byIndex = Number((await c.query('SELECT count(*) AS n FROM pets WHERE id > 0')).rows[0].n)
        if (byIndex !== rows.size) integrity = `index lists ${byIndex} rows, heap ${rows.size}`
      }
    }
    return { integrity, rows, method }
  })
}

/** Walks GET /v1/pets by `after` to the end; every id once, ascending. */
async function listAll(server: ServerProcess, key: string): Promise<Map<number, Pet>> {
  const listed = new Map<number, Pet>()
  let after: number | undefined
  for (let page = 0; ; page++) {
    assert.ok(page < 5_000, 'the walk ends')
    const res = await request(`${server.url}/v1/pets?limit=100${after === undefined ? '' : `&after=${after}`}`, {
      headers: bearer(key),
      timeoutMs: 10_000,
    })
    assert.equal(res.status, 200, res.text)
    const pets = res.body as Pet[]
    for (const p of pets) {
      assert.ok(after === undefined || p.id > after, 'ascending ids')
      assert.ok(!listed.has(p.id), `id ${p.id} listed twice`)
      listed.set(p.id, p)
      after = p.id
    }
    if (!res.headers.get('link')) return listed
  }
}

/** Every acknowledged animal is in `rows` unchanged; every other row is one of the requests sent. */
function verifyAgainst(ledger: Ledger, rows: Map<number, Pet>, where: string): void {
  let lost = 0
  for (const [id, pet] of ledger.acknowledged) {
    const row = rows.get(id)
    if (row === undefined) {
      lost++
      continue
    }
    assert.deepEqual(row, pet, `${where}: pet ${id} unchanged`)
  }
  assert.equal(lost, 0, `${where}: ${lost} of ${ledger.acknowledged.size} acknowledged pets are lost`)
  ledger.verifications += ledger.acknowledged.size
  for (const [id, row] of rows) {
    if (ledger.acknowledged.has(id)) continue
    const sent = ledger.sent.get(row.name)
    assert.ok(sent !== undefined, `${where}: row ${id} (${row.name}) was never sent`)
    assert.deepEqual(row, { id, ...sent }, `${where}: unacknowledged row ${id} is what was sent`)
  }
}

type KillMoment = 'random' | 'after-burst'

interface RoundResult {
  acknowledged: number
  /** When the kill came, for the report. */
  kill: string
}

/**
 * One round: WRITERS loops creating animals until the server is SIGKILLed, at a random moment or
 * right after the last 201 of a burst of BURST concurrent creates. Any failure before the kill (a
 * non-201, a network error) fails the test.
 */
async function loadAndKill(server: ServerProcess, key: string, ledger: Ledger, round: number, moment: KillMoment): Promise<RoundResult> {
  let killedAt: number | undefined
  const failures: string[] = []
  let seq = 0
  let acknowledged = 0
  /** One create; false when it failed (recorded as a failure unless the server was killed). */
  let firstAcknowledged = () => {}
  const acknowledgedOnce = new Promise<void>((resolve) => {
    firstAcknowledged = resolve
  })
  const create = async (who: string): Promise<boolean> => {
    const n = seq++
    const petStatus = STATUSES[n % STATUSES.length]
    // Unique name (the ledger's key), some non-ASCII and JSON-escaped characters, varied categories.
    const body: NewPet = {
      name: `r${round}-${who}-${n} "kill" 🐾 ñ\\`,
      categoryId: (n * 7919) % 1_000_003,
      ...(petStatus ? { status: petStatus } : {}),
    }
    ledger.sent.set(body.name, body)
    let status: number
    let text: string
    try {
      const res = await fetch(`${server.url}/v1/pets`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(8_000),
      })
      status = res.status
      text = await res.text()
    } catch (error) {
      // After the kill, connections reset or are refused: expected. Before it: a failure.
      if (killedAt === undefined) failures.push(String(error))
      return false
    }
    if (status !== 201) {
      if (killedAt === undefined) failures.push(`${status} ${text}`)
      return false
    }
    // A 201 that made it out is a promise, even one read after the kill.
    const pet = JSON.parse(text) as Pet
    assert.ok(!ledger.acknowledged.has(pet.id), `id ${pet.id} acknowledged twice`)
    assert.deepEqual(pet, { id: pet.id, ...body }, 'the 201 body is what was sent')
    ledger.acknowledged.set(pet.id, pet)
    acknowledged++
    firstAcknowledged()
    return true
  }
  const writer = async (w: number) => {
    while (killedAt === undefined && (await create(`w${w}`)));
  }
  // A broken promise (duplicate id, altered body) is reported after the kill, not left unhandled.
  const broken: unknown[] = []
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w).catch((error: unknown) => void broken.push(error)))
  let kill: string
  if (moment === 'after-burst') {
    const started = performance.now()
    const burst = await Promise.all(
      Array.from({ length: BURST }, (_, i) => create(`b${i}`).catch((error: unknown) => (broken.push(error), false))),
    )
    // Right after the last 201 of the burst: no goodbye, no flush.
    server.child.kill('SIGKILL')
    killedAt = performance.now()
    assert.equal(burst.filter((ok) => !ok).length, 0, `all ${BURST} creates of the burst got 201: ${failures.join('; ')}`)
    kill = `right after the last 201 of a ${BURST}-create burst (${Math.round(killedAt - started)} ms)`
  } else {
    const killAfterMs = KILL_MIN_MS + Math.floor(Math.random() * (KILL_MAX_MS - KILL_MIN_MS))
    // Writers that all fail stop (and are reported below) rather than wait here for a 201 forever.
    await Promise.race([acknowledgedOnce, Promise.all(writers)])
    await sleep(killAfterMs)
    killedAt = performance.now()
    server.child.kill('SIGKILL')
    kill = `${killAfterMs} ms after the first 201`
  }
  const exit = await server.exited
  await Promise.all(writers)
  if (broken.length > 0) throw broken[0]
  assert.equal(exit.signal, 'SIGKILL', 'the server died of the SIGKILL')
  assert.deepEqual(failures, [], `round ${round}: no create failed before the kill`)
  assert.ok(acknowledged > 0, `round ${round}: some creates were acknowledged before the kill`)
  ledger.crashes++
  return { acknowledged, kill }
}

interface Backend {
  label: string
  /** Starts a server on the same data. */
  start(): Promise<ServerProcess>
  /** The store as the crash left it (server not running). */
  snapshot(): Promise<StoreSnapshot>
  key: string
  extra?: () => string
  /** How each round's kill comes; random when the list runs out. */
  moments?: KillMoment[]
}

/** Through a restarted server: exactly the rows of the store as the crash left it, and every acknowledged animal. */
async function verifyRestarted(
  backend: Backend,
  server: ServerProcess,
  ledger: Ledger,
  store: StoreSnapshot,
  where: string,
): Promise<void> {
  const listed = await listAll(server, backend.key)
  assert.deepEqual(
    [...listed.keys()],
    [...store.rows.keys()].sort((a, b) => a - b),
    `${where}: paging lists every row of the store once`,
  )
  verifyAgainst(ledger, listed, where)
}

async function crashRounds(backend: Backend, kills: number): Promise<void> {
  const ledger = newLedger()
  const started = performance.now()
  const perRound: string[] = []
  let store: StoreSnapshot | undefined
  for (let round = 1; round <= kills; round++) {
    const server = await backend.start()
    // The restarted server sees everything acknowledged before every earlier crash.
    if (store) await verifyRestarted(backend, server, ledger, store, `${backend.label}, API after restart ${round - 1}`)
    const result = await loadAndKill(server, backend.key, ledger, round, backend.moments?.[round - 1] ?? 'random')
    store = await backend.snapshot()
    assert.equal(store.integrity, 'ok', `${backend.label}: integrity check after crash ${round}`)
    verifyAgainst(ledger, store.rows, `${backend.label}, store after crash ${round}`)
    perRound.push(`${result.acknowledged} acked, killed ${result.kill}${backend.extra ? ', ' + backend.extra() : ''}`)
  }
  // Final restart: the API agrees, a new create works and gets a fresh id, and a clean stop is clean.
  const server = await backend.start()
  await verifyRestarted(backend, server, ledger, store!, `${backend.label}, API after the last restart`)
  const ids = [...ledger.acknowledged.keys()]
  assert.equal(new Set(ids).size, ids.length, 'ids unique')
  const sample = [...ids.slice(0, 3), ...ids.slice(-3)]
  for (const id of sample) {
    const res = await request(`${server.url}/v1/pets/${id}`, { headers: bearer(backend.key) })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body, ledger.acknowledged.get(id))
  }
  const fresh = await request(`${server.url}/v1/pets`, {
    method: 'POST',
    headers: bearer(backend.key),
    body: { name: 'after the crashes', categoryId: 1 },
  })
  assert.equal(fresh.status, 201, fresh.text)
  assert.ok(!store!.rows.has((fresh.body as Pet).id), 'a new id is none of the rows the crashes left, acknowledged or not')
  const stopped = await server.stop('SIGTERM')
  assert.equal(stopped.code, 0, 'clean stop after the crashes')
  const final = await backend.snapshot()
  assert.equal(final.integrity, 'ok', `${backend.label}: integrity check after a clean stop`)
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  process.stdout.write(
    `[faults] crash durability ${backend.label}: crashes survived ${ledger.crashes}, 201s acknowledged ${ledger.acknowledged.size}, ` +
      `201s checked ${ledger.verifications} (every acknowledged pet after every later crash and restart), lost = 0, ` +
      `unacknowledged rows found ${final.rows.size - 1 - ledger.acknowledged.size}; integrity: ${final.method} = ok (${seconds} s)\n` +
      perRound.map((line, i) => `[faults]   crash ${i + 1}: ${line}\n`).join(''),
  )
}

async function sqliteBackend(t: TestContext, durability: 'process' | 'power', moments: KillMoment[] = []): Promise<Backend> {
  const dir = await useTempDir(t, 'animal-store-faults-')
  const db = join(dir, 'store.db')
  const env = { DURABILITY: durability, LOG_LEVEL: 'warn' }
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'crash', perMinute: 10_000_000, perDay: 100_000_000, env })
  return {
    label: `SQLite DURABILITY=${durability}`,
    key,
    start: () => startServer(t, { dir, db, env }),
    snapshot: async () => sqliteSnapshot(db),
    extra: () => `WAL left by the kill: ${existsSync(db + '-wal')}`,
    moments,
  }
}

test('SQLite (DURABILITY=process): every 201 survives 5 kill -9s under concurrent writes', { timeout: 120_000 }, async (t) => {
  await crashRounds(await sqliteBackend(t, 'process', ['after-burst']), 5)
})

test('SQLite (DURABILITY=power): every 201 survives kill -9s under concurrent writes', { timeout: 60_000 }, async (t) => {
  await crashRounds(await sqliteBackend(t, 'power'), 2)
})

test('PostgreSQL: every 201 survives 5 kill -9s under concurrent writes', { timeout: 90_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  const dir = await useTempDir(t, 'animal-store-faults-')
  const url = await useScratchDatabase(t, 'as_scale_')
  const env = { LOG_LEVEL: 'warn' }
  const { key } = await createKeyViaCli(url, { plan: 'enterprise', name: 'crash', perMinute: 10_000_000, perDay: 100_000_000, env })
  await crashRounds(
    {
      label: 'PostgreSQL',
      key,
      start: () => startServer(t, { dir, db: url, env }),
      snapshot: () => postgresSnapshot(url),
    },
    5,
  )
})
