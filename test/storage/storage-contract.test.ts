import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import type { RecordedChange } from '../../src/changes/audit-log.js'
import { type ApiKeyRecord, generateKey, hashKey } from '../../src/keys/api-key.js'
import { KeyResolver } from '../../src/keys/key-resolver.js'
import type { KeyRevocation } from '../../src/keys/repository.js'
import type { Pet } from '../../src/pets/schemas.js'
import { INT64_MAX, INT64_MIN } from '../../src/shared/int64.js'
import { StorageUnavailableError } from '../../src/shared/outages.js'
import { ALL_SCOPES } from '../../src/shared/scopes.js'
import { isUnavailable, TIMEOUTS } from '../../src/storage/postgres/connection.js'
import { KEY_CHANGE_CHANNEL_SQL } from '../../src/storage/postgres/key-change-watcher.js'
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import type { Storage } from '../../src/storage/storage.js'
import { PG_PATIENCE, PG_URL, requireService } from '../helpers/services.js'
import { dropSchema } from '../helpers/stores.js'
import { REVOCATION_DEADLINE_MS } from '../helpers/wait.js'

interface Harness {
  storage: Storage
  /** Another instance on the same database, as a second process would open it (absent for :memory:). */
  peer?: () => Promise<Storage>
  /** Deletes a pet's row behind the store's back, as no operation can (absent for :memory:). */
  deletePetRow?: (id: number) => Promise<void>
}

interface Engine {
  name: string
  service?: 'PostgreSQL'
  /** Opens a fresh, empty store; everything it opens is closed and removed after the test. */
  create(t: TestContext): Promise<Harness>
}

const randomSchema = () => `test_${randomBytes(6).toString('hex')}`

/** Closes every store a test opened, then runs the engine's own cleanup. */
function tracker(t: TestContext, cleanup?: () => Promise<void> | void) {
  const opened: Storage[] = []
  t.after(async () => {
    for (const s of opened) await s.close()
    await cleanup?.()
  })
  return <S extends Storage>(s: S): S => {
    opened.push(s)
    return s
  }
}

const ENGINES: Engine[] = [
  {
    name: 'SQLite :memory:',
    async create(t) {
      const track = tracker(t)
      return { storage: track(new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })) }
    },
  },
  {
    name: 'SQLite file',
    async create(t) {
      const dir = mkdtempSync(join(tmpdir(), 'animal-store-'))
      const track = tracker(t, () => rmSync(dir, { recursive: true, force: true }))
      const open = async () => track(new SqliteStorage({ databaseUrl: join(dir, 'store.db'), durability: 'process' }))
      const deletePetRow = async (id: number) => {
        const db = new Database(join(dir, 'store.db'))
        db.prepare('DELETE FROM pets WHERE id = ?').run(id)
        db.close()
      }
      return { storage: await open(), peer: open, deletePetRow }
    },
  },
  {
    name: 'PostgreSQL',
    service: 'PostgreSQL',
    async create(t) {
      const schema = randomSchema()
      const track = tracker(t, () => dropSchema(schema))
      const open = async () => track(await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema }))
      const deletePetRow = async (id: number) => {
        const client = new pg.Client({ connectionString: PG_URL })
        await client.connect()
        try {
          await client.query(`DELETE FROM ${schema}.pets WHERE id = $1`, [id])
        } finally {
          await client.end()
        }
      }
      return { storage: await open(), peer: open, deletePetRow }
    },
  },
]

async function setup(t: TestContext, engine: Engine): Promise<Harness | undefined> {
  if (engine.service && !(await requireService(t, engine.service))) return undefined
  return engine.create(t)
}

let keyCounter = 0
function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  keyCounter++
  const id = overrides.id ?? `key_${randomBytes(8).toString('hex')}`
  return {
    id,
    name: `key ${keyCounter}`,
    plan: 'pro',
    perMinute: 300,
    perDay: 10_000,
    hash: randomBytes(32).toString('hex'),
    prefix: 'as_test_abcd',
    quotaId: id,
    customerId: null,
    scopes: [...ALL_SCOPES],
    createdAt: 1_790_000_000_000 + keyCounter,
    updatedAt: 1_790_000_000_000 + keyCounter,
    expiresAt: null,
    revokedAt: null,
    rotatedTo: null,
    rotatedFrom: null,
    metadata: null,
    lastUsedAt: null,
    ...overrides,
  }
}

const TWO_53_PLUS_1 = 2n ** 53n + 1n

/** Every migration file, in the order they apply: each must be recorded exactly once. */
const POSTGRES_MIGRATIONS = readdirSync(new URL('../../src/storage/postgres/migrations/', import.meta.url))
  .filter((f) => f.endsWith('.sql'))
  .sort()

for (const engine of ENGINES) {
  describe(`storage contract: ${engine.name}`, () => {
    test('createPet returns the stored pet; getPet finds it; unknown ids are undefined', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const created = await h.storage.pets.createPet({ name: 'Rex', categoryId: 7, status: 'available' })
      assert.equal(typeof created.id, 'number')
      assert.deepEqual(created, { id: created.id, name: 'Rex', categoryId: 7, status: 'available' })
      assert.deepEqual(await h.storage.pets.getPet(created.id), created)
      assert.deepEqual(await h.storage.pets.getPet(BigInt(created.id)), created)
      assert.equal(await h.storage.pets.getPet(created.id + 1000), undefined)
      assert.equal(await h.storage.pets.getPet(INT64_MAX), undefined)
    })

    test('listPets: ascending ids, limit, status filter', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const statuses = ['available', 'sold', undefined, 'available', 'pending', 'available'] as const
      const created: Pet[] = []
      for (const [i, status] of statuses.entries()) {
        created.push(await h.storage.pets.createPet({ name: `p${i}`, categoryId: i, ...(status ? { status } : {}) }))
      }
      const ids = created.map((p) => p.id)
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        ids,
        'ids ascend in creation order',
      )
      assert.deepEqual(await h.storage.pets.listPets({ limit: 100 }), created)
      assert.deepEqual(await h.storage.pets.listPets({ limit: 2 }), created.slice(0, 2))
      assert.deepEqual(
        await h.storage.pets.listPets({ limit: 100, status: 'available' }),
        created.filter((p) => p.status === 'available'),
      )
      assert.deepEqual(await h.storage.pets.listPets({ limit: 1, status: 'available' }), [created[0]])
      assert.deepEqual(await h.storage.pets.listPets({ limit: 100, status: 'pending' }), [created[4]])
    })

    test('listPets: keyset paging with afterId (number and bigint) walks every pet once', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const created: Pet[] = []
      for (let i = 0; i < 10; i++) {
        created.push(await h.storage.pets.createPet({ name: `p${i}`, categoryId: i, status: i % 2 ? 'sold' : 'available' }))
      }
      const walk = async (status?: 'sold') => {
        const seen: Pet[] = []
        let afterId: number | bigint | undefined
        for (let page = 0; page < 20; page++) {
          const rows = await h.storage.pets.listPets({
            limit: 3,
            ...(status ? { status } : {}),
            ...(afterId === undefined ? {} : { afterId }),
          })
          seen.push(...rows)
          if (rows.length < 3) break
          // Alternate representations: a bigint cursor must behave exactly like a number one.
          afterId = page % 2 ? rows.at(-1)!.id : BigInt(rows.at(-1)!.id)
        }
        return seen
      }
      assert.deepEqual(await walk(), created)
      assert.deepEqual(
        await walk('sold'),
        created.filter((p) => p.status === 'sold'),
      )
      assert.deepEqual(await h.storage.pets.listPets({ limit: 5, afterId: created.at(-1)!.id }), [])
      assert.deepEqual(await h.storage.pets.listPets({ limit: 5, afterId: INT64_MAX }), [])
      assert.deepEqual(await h.storage.pets.listPets({ limit: 2, afterId: 0 }), created.slice(0, 2))
    })

    test('categoryId round-trips exactly at the int64 extremes and beyond 2^53', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const values = [
        INT64_MIN,
        INT64_MAX,
        TWO_53_PLUS_1,
        -TWO_53_PLUS_1,
        2n ** 53n,
        Number.MAX_SAFE_INTEGER,
        Number.MIN_SAFE_INTEGER,
        0,
        -1,
      ]
      for (const categoryId of values) {
        const created = await h.storage.pets.createPet({ name: 'big', categoryId })
        const read = await h.storage.pets.getPet(created.id)
        const [listed] = await h.storage.pets.listPets({ limit: 1, afterId: created.id - 1 })
        for (const pet of [created, read!, listed!]) {
          assert.equal(pet.categoryId, categoryId, `categoryId ${categoryId}`)
          // Invariant: a number is always a safe integer; bigint only beyond it.
          assert.equal(typeof pet.categoryId, typeof categoryId, `type of ${categoryId}`)
        }
      }
    })

    test('an absent status stays absent (never null)', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const created = await h.storage.pets.createPet({ name: 'Nameless', categoryId: 1 })
      const read = await h.storage.pets.getPet(created.id)
      const [listed] = await h.storage.pets.listPets({ limit: 1 })
      for (const pet of [created, read!, listed!]) {
        assert.equal(Object.hasOwn(pet, 'status'), false)
        assert.deepEqual(Object.keys(pet).sort(), ['categoryId', 'id', 'name'])
      }
    })

    test('200 concurrent createPet calls get unique ids, listed in ascending order', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const created = await Promise.all(Array.from({ length: 200 }, (_, i) => h.storage.pets.createPet({ name: `c${i}`, categoryId: i })))
      const ids = created.map((p) => p.id)
      assert.equal(new Set(ids).size, 200)
      for (const [i, p] of created.entries()) assert.equal(p.name, `c${i}`, 'each caller gets its own row back')
      const first = await h.storage.pets.listPets({ limit: 100 })
      const second = await h.storage.pets.listPets({ limit: 100, afterId: first.at(-1)!.id })
      const listedIds = [...first, ...second].map((p) => p.id)
      assert.deepEqual(
        listedIds,
        [...ids].sort((a, b) => a - b),
      )
      for (const pet of [...first, ...second]) assert.equal(pet.categoryId, Number(pet.name.slice(1)))
    })

    test('keys: insert, find, list, revoke, changesSince', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const keys = h.storage.keys
      assert.deepEqual(await keys.changesSince(null), { cursor: 0, hashes: [] })
      const a = keyRecord({ plan: 'enterprise', perMinute: 1_000_000_000, perDay: 1_000_000_000 })
      const b = keyRecord()
      await keys.insertKey(a)
      await keys.insertKey(b)
      assert.deepEqual(await keys.findKeyByHash(a.hash), a)
      assert.equal(await keys.findKeyByHash('0'.repeat(64)), undefined)
      assert.deepEqual(await keys.listKeys(), [a, b])
      assert.deepEqual((await keys.changesSince(0)).hashes, [a.hash, b.hash], 'creations are in the change log')

      const start = (await keys.changesSince(null)).cursor
      assert.deepEqual(await keys.revokeKey(a.id, 1_790_000_100_000), { revoked: true, graces: [] })
      assert.deepEqual(await keys.revokeKey(a.id, 1_790_000_200_000), { revoked: false, graces: [] }, 'already revoked')
      assert.deepEqual(await keys.revokeKey('key_unknown', 1_790_000_200_000), { revoked: false, graces: [] })
      assert.deepEqual(await keys.findKeyByHash(a.hash), { ...a, revokedAt: 1_790_000_100_000, updatedAt: 1_790_000_100_000 })

      const batch = await keys.changesSince(start)
      assert.deepEqual(batch.hashes, [a.hash])
      assert.ok(batch.cursor > start)
      assert.deepEqual(await keys.changesSince(batch.cursor), { cursor: batch.cursor, hashes: [] })
      assert.equal((await keys.changesSince(null)).cursor, batch.cursor, 'null -> current position')

      await keys.revokeKey(b.id, 1_790_000_300_000)
      assert.deepEqual((await keys.changesSince(start)).hashes, [a.hash, b.hash])
    })

    test('pageKeys with a prefix: the keys of that display prefix only, exactly, newest first, paged (the lookup by prefix)', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const keys = h.storage.keys
      const [a, b, c, d] = [
        keyRecord({ id: 'key_pfxA', prefix: 'as_live_Ab1x', createdAt: 1_790_000_000_900 }),
        keyRecord({ id: 'key_pfxB', prefix: 'as_live_ab1x', revokedAt: 1_790_000_000_500 }),
        keyRecord({ id: 'key_pfxC', prefix: 'as_live_Ab1x', createdAt: 1_790_000_000_100, revokedAt: 1_790_000_000_500 }),
        keyRecord({ id: 'key_pfxD', prefix: 'as_live_Ab1xY' }),
      ]
      for (const k of [c, a, b, d]) await keys.insertKey(k!)
      const page = (filter: { after?: string; limit?: number }) =>
        keys.pageKeys({ prefix: 'as_live_Ab1x', limit: filter.limit ?? 10, after: filter.after, now: 1_790_000_001_000 })
      assert.deepEqual(
        (await page({})).map((k) => k.id),
        [a!.id, c!.id],
        'exact and case-sensitive, any state',
      )
      assert.deepEqual(
        (await page({ limit: 1 })).map((k) => k.id),
        [a!.id],
      )
      assert.deepEqual(
        (await page({ after: a!.id })).map((k) => k.id),
        [c!.id],
      )
      assert.deepEqual(await keys.pageKeys({ prefix: 'as_live_Ab1', limit: 10, now: 0 }), [], 'not a prefix search')
    })

    test('revokeKey revokes the keys of its rotation chain still in their grace period, with their change log and audit, at once', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const keys = h.storage.keys
      const at = 1_790_000_500_000
      // A -> B -> C -> D: A's grace is over, B's and C's run on, D is the chain's current key.
      const a = keyRecord({ id: 'key_chainA' })
      const quota = { quotaId: a.id }
      const b = keyRecord({ id: 'key_chainB', ...quota, rotatedFrom: a.id })
      const c = keyRecord({ id: 'key_chainC', ...quota, rotatedFrom: b.id })
      const d = keyRecord({ id: 'key_chainD', ...quota, rotatedFrom: c.id })
      const other = keyRecord({ id: 'key_otherA', rotatedTo: 'key_otherB', expiresAt: at + 60_000 })
      for (const [k, rotatedTo, expiresAt] of [
        [a, b.id, at - 1],
        [b, c.id, at + 1],
        [c, d.id, at + 3_600_000],
        [d, null, null],
      ] as const)
        await keys.insertKey({ ...k, rotatedTo, expiresAt })
      await keys.insertKey(other)
      const start = (await keys.changesSince(null)).cursor
      const recorded = (revocation: KeyRevocation): RecordedChange => ({
        audit: [
          {
            at,
            actor: { type: 'cli', id: 'tester' },
            action: 'key.revoke',
            keyId: d.id,
            details: { revoked: revocation.revoked, graces: revocation.graces.length },
            requestId: null,
          },
        ],
      })

      const revocation = await keys.revokeKey(d.id, at, recorded)
      assert.equal(revocation.revoked, true)
      assert.deepEqual(revocation.graces.map((k) => [k.id, k.revokedAt, k.updatedAt]).sort(), [
        [b.id, at, at],
        [c.id, at, at],
      ])
      for (const k of [b, c, d]) assert.equal((await keys.findKeyById(k.id))?.revokedAt, at, k.id)
      assert.equal((await keys.findKeyById(a.id))?.revokedAt, null, 'a key past its grace is left as it is')
      assert.equal((await keys.findKeyById(other.id))?.revokedAt, null, 'another chain is untouched')
      assert.deepEqual((await keys.changesSince(start)).hashes.sort(), [b.hash, c.hash, d.hash].sort(), 'every instance drops them')
      const entries = await h.storage.audit.list({ limit: 10, action: 'key.revoke' })
      assert.deepEqual(
        entries.entries.map((e) => [e.keyId, e.details]),
        [[d.id, { revoked: true, graces: 2 }]],
        'the entries the caller made, in the transaction',
      )

      // Nothing left to revoke: no key and no change-log row is written, but what the caller records
      // of a repeat is (the key service's `alreadyRevoked` entry), in the revocation's transaction.
      const again = (await keys.changesSince(null)).cursor
      assert.deepEqual(await keys.revokeKey(d.id, at + 1, recorded), { revoked: false, graces: [] })
      assert.deepEqual((await keys.changesSince(again)).hashes, [])
      assert.deepEqual(
        (await h.storage.audit.list({ limit: 10, action: 'key.revoke' })).entries.map((e) => e.details),
        [
          { revoked: true, graces: 2 },
          { revoked: false, graces: 0 },
        ],
      )
    })

    test('a duplicate key hash is rejected as an ordinary error, not as unavailability', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const a = keyRecord()
      await h.storage.keys.insertKey(a)
      await assert.rejects(h.storage.keys.insertKey(keyRecord({ hash: a.hash })), (error) => {
        assert.ok(!(error instanceof StorageUnavailableError))
        return true
      })
    })

    test('insertFirstKey: exactly one of 10 concurrent calls (across instances where possible) inserts', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const stores = [h.storage, ...(h.peer ? [await h.peer(), await h.peer()] : [])]
      const records = Array.from({ length: 10 }, () => keyRecord())
      const results = await Promise.all(records.map((r, i) => stores[i % stores.length]!.keys.insertFirstKey(r)))
      assert.equal(results.filter(Boolean).length, 1)
      const listed = await h.storage.keys.listKeys()
      assert.equal(listed.length, 1)
      assert.deepEqual(listed[0], records[results.indexOf(true)])
      assert.equal(await h.storage.keys.insertFirstKey(keyRecord()), false)
      assert.deepEqual((await h.storage.keys.changesSince(0)).hashes, [listed[0]!.hash], 'the one created is in the change log')
    })

    test('secretHashes: every API key and admin token, revoked ones included, in one string', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      assert.equal(await h.storage.keys.secretHashes(), '', 'none yet')
      const a = keyRecord()
      const b = keyRecord()
      await h.storage.keys.insertKey(a)
      await h.storage.keys.insertKey(b)
      await h.storage.keys.revokeKey(b.id, 1_790_000_100_000)
      const token = {
        id: 'adm_contract',
        name: 'ops',
        hash: randomBytes(32).toString('hex'),
        prefix: 'as_admin_abcd',
        role: 'admin' as const,
        createdBy: null,
        createdAt: 1,
        revokedAt: null,
      }
      await h.storage.adminTokens.insert(token)
      assert.deepEqual((await h.storage.keys.secretHashes()).split(',').sort(), [a.hash, b.hash, token.hash].sort())
    })

    test('migrations are idempotent: reopening keeps the data', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      if (!h.peer) return t.skip('an in-memory database cannot be reopened')
      const pet = await h.storage.pets.createPet({ name: 'Kept', categoryId: INT64_MAX })
      const again = await h.peer()
      const third = await h.peer()
      assert.deepEqual(await again.pets.getPet(pet.id), pet)
      assert.deepEqual(await third.pets.listPets({ limit: 10 }), [pet])
    })

    test('ping answers while the store is up, and fails once it is closed', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      await assert.doesNotReject(h.storage.ping())
      const other = h.peer ? await h.peer() : h.storage
      await other.close()
      await assert.rejects(other.ping(), 'a closed store does not answer ping')
    })

    test('createPetOnce: created once per (scope, key); same fingerprint replays, another is refused', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const pets = h.storage.pets
      const claim = { scope: 'key_a', key: 'k-1', fingerprint: 'f'.repeat(64), createdAt: 1_790_000_000_000 }
      const first = await pets.createPetOnce({ name: 'Once', categoryId: INT64_MAX, status: 'sold' }, claim)
      assert.equal(first.outcome, 'created')
      const pet = (first as { pet: Pet }).pet
      assert.deepEqual(pet, { id: pet.id, name: 'Once', categoryId: INT64_MAX, status: 'sold' })
      assert.deepEqual(await pets.createPetOnce({ name: 'Once', categoryId: INT64_MAX, status: 'sold' }, claim), {
        outcome: 'replayed',
        pet,
      })
      assert.deepEqual(await pets.createPetOnce({ name: 'Other', categoryId: 1 }, { ...claim, fingerprint: 'e'.repeat(64) }), {
        outcome: 'reused',
      })
      const otherApiKey = await pets.createPetOnce({ name: 'Once', categoryId: 1 }, { ...claim, scope: 'key_b' })
      assert.equal(otherApiKey.outcome, 'created')
      assert.deepEqual(
        (await pets.listPets({ limit: 10 })).map((p) => p.name),
        ['Once', 'Once'],
      )
    })

    test('createPetOnce: a record whose pet is gone answers pet_missing, creates nothing, and fails no other create of its batch', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      if (h.deletePetRow === undefined) return t.skip('no second connection to a :memory: database')
      const pets = h.storage.pets
      const claim = { scope: 'key_a', key: 'gone', fingerprint: 'f'.repeat(64), createdAt: 1_790_000_000_000 }
      const first = await pets.createPetOnce({ name: 'Gone', categoryId: 1 }, claim)
      const id = (first as { pet: Pet }).pet.id
      await h.deletePetRow(id)
      // Together: on SQLite both go into one group commit, which the replay must not roll back.
      const [replay, other] = await Promise.all([
        pets.createPetOnce({ name: 'Gone', categoryId: 1 }, claim),
        pets.createPet({ name: 'Other', categoryId: 2 }),
      ])
      assert.deepEqual(replay, { outcome: 'pet_missing', petId: id })
      assert.equal(other.name, 'Other')
      assert.deepEqual(
        (await pets.listPets({ limit: 10 })).map((p) => p.name),
        ['Other'],
      )
    })

    test('createPetOnce: 20 concurrent calls with one claim (across instances where possible) create one pet', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const stores = [h.storage, ...(h.peer ? [await h.peer(), await h.peer()] : [])]
      const claim = { scope: 'key_a', key: 'race', fingerprint: 'f'.repeat(64), createdAt: 1_790_000_000_000 }
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => stores[i % stores.length]!.pets.createPetOnce({ name: 'Raced', categoryId: 1 }, claim)),
      )
      const outcomes = results.map((r) => r.outcome)
      assert.equal(outcomes.filter((o) => o === 'created').length, 1, outcomes.join(' '))
      assert.ok(
        outcomes.every((o) => o === 'created' || o === 'replayed' || o === 'in_flight'),
        outcomes.join(' '),
      )
      const ids = new Set(results.flatMap((r) => ('pet' in r ? [r.pet.id] : [])))
      assert.equal(ids.size, 1)
      assert.equal((await h.storage.pets.listPets({ limit: 100 })).length, 1)
    })

    test('deleteIdempotencyRecords deletes the records created before the time, in batches, and only those', async (t) => {
      const h = await setup(t, engine)
      if (!h) return
      const pets = h.storage.pets
      const claim = (key: string, createdAt: number) => ({ scope: 'key_a', key, fingerprint: 'f'.repeat(64), createdAt })
      // More than one delete batch (1,000) of old records. Created 50 at a time: 1,100 at once queue
      // behind the pool's few connections for longer than its connection timeout on a loaded
      // machine (a StorageUnavailableError that is about the test, not the store).
      for (let from = 0; from < 1_100; from += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) => from + j).map((i) =>
            pets.createPetOnce({ name: `old${i}`, categoryId: i }, claim(`old-${i}`, 1_000 + i)),
          ),
        )
      }
      await pets.createPetOnce({ name: 'new', categoryId: 1 }, claim('new', 5_000))
      assert.equal(await pets.deleteIdempotencyRecords(1_050), 50)
      assert.equal(await pets.deleteIdempotencyRecords(5_000), 1_050)
      assert.equal(await pets.deleteIdempotencyRecords(5_000), 0)
      assert.equal(
        (await pets.createPetOnce({ name: 'old0', categoryId: 0 }, claim('old-0', 6_000))).outcome,
        'created',
        'a deleted key is new again',
      )
      assert.equal((await pets.createPetOnce({ name: 'new', categoryId: 1 }, claim('new', 6_000))).outcome, 'replayed')
      assert.equal((await pets.listPets({ limit: 100, afterId: 0 })).length, 100, 'the pets themselves stay')
    })
  })
}

/** A TCP relay to PostgreSQL that a test can cut (drop every connection, refuse new ones) and restore. */
async function relay(targetPort: number) {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((inbound) => {
    const outbound = net.connect(targetPort, '127.0.0.1')
    for (const s of [inbound, outbound]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {})
    }
    inbound.pipe(outbound).pipe(inbound)
  })
  const listen = (port: number) =>
    new Promise<number>((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)))
  const port = await listen(0)
  return {
    url: withPort(PG_URL, port),
    async cut() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const s of sockets) s.destroy()
      })
    },
    async restore() {
      await listen(port)
    },
    close: () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
  }
}

function withPort(url: string, port: number): string {
  const u = new URL(url)
  u.port = String(port)
  return u.toString()
}

/**
 * Resolves once a watcher whose messages go to `heard` is listening: `watchChanges` resolves when
 * its first connection attempt has settled, connected or not (by design: polling covers a store
 * that is down), and on a busy machine that attempt can time out (TIMEOUTS.connectMs) and a retry
 * listen only later, losing what was sent before. A probe of its own is sent until it is heard.
 */
async function untilListening(heard: string[], schema: string): Promise<void> {
  const probe = `probe-${randomBytes(6).toString('hex')}`
  // On the schema's channel, as the store sends.
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
  await client.connect()
  try {
    await waitFor(
      async () => {
        await client.query(`SELECT pg_notify(${KEY_CHANGE_CHANNEL_SQL}, $1)`, [probe])
        await new Promise((r) => setTimeout(r, 50))
        return heard.includes(probe)
      },
      REVOCATION_DEADLINE_MS,
      'the watcher to listen',
    )
  } finally {
    await client.end()
  }
}

const waitFor = async (check: () => boolean | Promise<boolean>, ms: number, what: string) => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 20))
  }
  assert.fail(`timed out after ${ms} ms waiting for ${what}`)
}

describe('PostgreSQL specifics', () => {
  // Bounds by mechanism, generous for a busy machine: an open gives up by its connect timeout
  // (2 s), well before the query timeout (7 s) that would be next, and long before "never".
  const GIVES_UP_WITHIN_MS = TIMEOUTS.queryMs

  test('open rejects with StorageUnavailableError when nothing listens (port 1)', async () => {
    const started = Date.now()
    await assert.rejects(PostgresStorage.open({ databaseUrl: withPort(PG_URL, 1) }), StorageUnavailableError)
    assert.ok(Date.now() - started < GIVES_UP_WITHIN_MS, `took ${Date.now() - started} ms`)
  })

  test('open rejects with StorageUnavailableError, not a hang, when the server never answers', async () => {
    const held: net.Socket[] = []
    const server = net.createServer((s) => held.push(s)) // accepts, then silence
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    try {
      const started = Date.now()
      const port = (server.address() as net.AddressInfo).port
      await assert.rejects(PostgresStorage.open({ databaseUrl: withPort(PG_URL, port) }), StorageUnavailableError)
      assert.ok(Date.now() - started < GIVES_UP_WITHIN_MS, `took ${Date.now() - started} ms`)
    } finally {
      for (const s of held) s.destroy()
      await new Promise((r) => server.close(r))
    }
  })

  test('classifies connection failures as unavailable and request errors as not', () => {
    for (const code of ['57P01', '57P03', '08006', '53300', '57014', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']) {
      assert.equal(isUnavailable(Object.assign(new Error('x'), { code })), true, code)
    }
    assert.equal(isUnavailable(new Error('Connection terminated unexpectedly')), true)
    assert.equal(isUnavailable(new Error('timeout exceeded when trying to connect')), true)
    assert.equal(isUnavailable(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])), true)
    for (const code of ['23505', '22003', '42P01', '40001', undefined]) {
      assert.equal(isUnavailable(Object.assign(new Error('x'), { code })), false, String(code))
    }
  })

  test('a running store answers StorageUnavailableError while the server is gone, and recovers', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = randomSchema()
    const link = await relay(Number(new URL(PG_URL).port || 5432))
    const storage = await PostgresStorage.open({ databaseUrl: link.url, schema })
    t.after(async () => {
      await storage.close()
      await link.close()
      await dropSchema(schema)
    })
    const pet = await storage.pets.createPet({ name: 'Before', categoryId: 1 })

    await link.cut()
    for (const attempt of [
      () => storage.pets.getPet(pet.id),
      () => storage.pets.createPet({ name: 'During', categoryId: 2 }),
      () => storage.keys.insertFirstKey(keyRecord()),
      () => storage.keys.revokeKey('key_x', 1),
      () => storage.ping(),
    ]) {
      await assert.rejects(attempt(), StorageUnavailableError)
    }

    await link.restore()
    assert.deepEqual(await storage.pets.getPet(pet.id), pet)
    await storage.ping()
  })

  test('migrations run once when several instances open a new schema at the same moment', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = randomSchema()
    const stores = await Promise.all(Array.from({ length: 5 }, () => PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })))
    t.after(async () => {
      for (const s of stores) await s.close()
      await dropSchema(schema)
    })
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    try {
      const { rows } = await client.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`)
      assert.deepEqual(
        rows.map((r: { version: string }) => r.version),
        POSTGRES_MIGRATIONS,
      )
    } finally {
      await client.end()
    }
    const pet = await stores[0]!.pets.createPet({ name: 'Shared', categoryId: 1 })
    assert.deepEqual(await stores[4]!.pets.getPet(pet.id), pet)
  })

  test('watchChanges delivers a revocation made through another instance', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = randomSchema()
    const watcher = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const revoker = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    t.after(async () => {
      await watcher.close()
      await revoker.close()
      await dropSchema(schema)
    })
    const heard: string[] = []
    const unsubscribe = await watcher.keys.watchChanges!((hash) => heard.push(hash))
    await untilListening(heard, schema)
    const key = keyRecord()
    const mine = () => heard.filter((hash) => hash === key.hash)
    await revoker.keys.insertKey(key)
    await revoker.keys.revokeKey(key.id, Date.now())
    // tens of ms; generous for a busy machine
    await waitFor(() => mine().length >= 2, REVOCATION_DEADLINE_MS, 'the NOTIFYs')
    assert.deepEqual(mine(), [key.hash, key.hash], 'its creation, then its revocation')

    await unsubscribe()
    const other = keyRecord()
    const heardBefore = heard.length
    await revoker.keys.insertKey(other)
    await revoker.keys.revokeKey(other.id, Date.now())
    await new Promise((r) => setTimeout(r, 200))
    assert.equal(heard.length, heardBefore, 'nothing after unsubscribe')
  })

  test('watchChanges hears its own schema only: a store in another schema of the same database does not wake it', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const [schema, elsewhere] = [randomSchema(), randomSchema()]
    const watcher = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const neighbour = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema: elsewhere })
    const revoker = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    t.after(async () => {
      for (const store of [watcher, neighbour, revoker]) await store.close()
      await dropSchema(schema)
      await dropSchema(elsewhere)
    })
    const heard: string[] = []
    const unsubscribe = await watcher.keys.watchChanges!((hash) => heard.push(hash))
    t.after(unsubscribe)
    await untilListening(heard, schema)
    const theirs = keyRecord()
    await neighbour.keys.insertKey(theirs)
    await neighbour.keys.revokeKey(theirs.id, Date.now())
    // Sent after theirs, on this schema's channel: once it is heard, theirs would have been too.
    const mine = keyRecord()
    await revoker.keys.insertKey(mine)
    await waitFor(() => heard.includes(mine.hash), REVOCATION_DEADLINE_MS, "this schema's NOTIFY")
    assert.ok(!heard.includes(theirs.hash), 'a change in another schema was heard')
  })

  test('watchChanges reconnects after its connection drops', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = randomSchema()
    const link = await relay(Number(new URL(PG_URL).port || 5432))
    const watcher = await PostgresStorage.open({ databaseUrl: link.url, schema })
    const revoker = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    t.after(async () => {
      await watcher.close()
      await revoker.close()
      await link.close()
      await dropSchema(schema)
    })
    const heard: string[] = []
    await watcher.keys.watchChanges!((hash) => heard.push(hash))

    await link.cut()
    await new Promise((r) => setTimeout(r, 300)) // a few failed reconnect attempts
    await link.restore()

    // Messages sent while the listener is down are lost by design, so revoke until one arrives.
    const deadline = Date.now() + 20_000
    let delivered = false
    while (!delivered && Date.now() < deadline) {
      const key = keyRecord()
      await revoker.keys.insertKey(key)
      await revoker.keys.revokeKey(key.id, Date.now())
      const until = Date.now() + 250
      while (Date.now() < until && !heard.includes(key.hash)) await new Promise((r) => setTimeout(r, 20))
      delivered = heard.includes(key.hash)
    }
    assert.ok(delivered, 'a revocation was delivered after the reconnect')
  })

  test('KeyResolver drops a key revoked by another instance at once, long before its next poll', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = randomSchema()
    const a = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const b = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const resolver = new KeyResolver(a.keys, { env: 'staging', refreshMs: 60_000 })
    t.after(async () => {
      await resolver.stop()
      await a.close()
      await b.close()
      await dropSchema(schema)
    })
    await resolver.start()
    const plain = generateKey('staging')
    const record = keyRecord({ hash: hashKey(plain) })
    await b.keys.insertKey(record)
    // The creation's own NOTIFY (creations are in the change log) may arrive while the first lookup
    // is in flight, which is then not cached (CI saw it): the key counts as known once heard of.
    await waitFor(() => resolver.mayExist(plain), REVOCATION_DEADLINE_MS, 'the creation to be heard of')
    assert.deepEqual(await resolver.resolve(plain), record)
    assert.equal(resolver.cachedCount, 1)

    await b.keys.revokeKey(record.id, Date.now())
    await waitFor(() => resolver.cachedCount === 0, REVOCATION_DEADLINE_MS, 'the cache to drop the key') // the next poll is 60 s away
    assert.notEqual((await resolver.resolve(plain))?.revokedAt ?? null, null, 'found revoked, for the guard to refuse')
    await resolver.stop()
    await resolver.stop() // idempotent
  })

  test('KeyResolver knows of a key created by another instance at once, long before its next poll', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const schema = randomSchema()
    const a = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const b = await PostgresStorage.open({ ...PG_PATIENCE, databaseUrl: PG_URL, schema })
    const resolver = new KeyResolver(a.keys, { env: 'staging', refreshMs: 60_000 })
    t.after(async () => {
      await resolver.stop()
      await a.close()
      await b.close()
      await dropSchema(schema)
    })
    await resolver.start()
    const plain = generateKey('staging')
    assert.equal(resolver.mayExist(plain), false, 'not created yet')
    await b.keys.insertKey(keyRecord({ hash: hashKey(plain) }))
    await waitFor(() => resolver.mayExist(plain), REVOCATION_DEADLINE_MS, 'the filter to hold the new key') // the next poll is 60 s away
  })
})
