/**
 * Storage faults (issue 28, item 6): the engines' own errors for a full disk, an I/O error, a
 * corrupt page or a read-only database become StorageFaultError (a 503, remembered for
 * readiness); the SQLite write lock held past the busy timeout is a plain outage (503); anything
 * else stays what it is (a 500). Real errors of the engines where they can be made on demand.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import { StorageFaultError, StorageUnavailableError } from '../../src/shared/outages.js'
import { postgresFault, toStorageError } from '../../src/storage/postgres/connection.js'
import { sqliteFault, toSqliteStorageError } from '../../src/storage/sqlite/sqlite-errors.js'
import { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js'
import { StorageFaults } from '../../src/storage/storage-faults.js'
import { PG_URL, requireService } from '../helpers/services.js'

/** The error `work` throws. */
function thrownBy(work: () => unknown): unknown {
  try {
    work()
  } catch (error) {
    return error
  }
  assert.fail('nothing was thrown')
}

describe('SQLite', () => {
  test('a full database (max_page_count), a read-only connection: faults; a held write lock: an outage; a bad statement: itself', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'animal-store-faults-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const file = join(dir, 'x.db')
    const db = new Database(file)
    t.after(() => db.close())
    db.pragma('journal_mode = WAL')
    db.exec('CREATE TABLE t (v BLOB)')
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`)

    const full = toSqliteStorageError(thrownBy(() => db.prepare('INSERT INTO t VALUES (zeroblob(100000))').run()))
    assert.ok(full instanceof StorageFaultError)
    assert.equal(full.fault, 'disk_full')
    assert.match(full.message, /^the database is full: database or disk is full$/)

    db.pragma('query_only = ON')
    const readOnly = toSqliteStorageError(thrownBy(() => db.prepare('INSERT INTO t VALUES (1)').run()))
    assert.ok(readOnly instanceof StorageFaultError)
    assert.equal(readOnly.fault, 'read_only')
    db.pragma('query_only = OFF')

    const other = new Database(file, { timeout: 0 })
    t.after(() => other.close())
    db.exec('BEGIN IMMEDIATE')
    const busy = toSqliteStorageError(thrownBy(() => other.prepare('INSERT INTO t VALUES (1)').run()))
    db.exec('ROLLBACK')
    assert.ok(busy instanceof StorageUnavailableError)
    assert.equal(busy instanceof StorageFaultError, false, 'a lock is not a fault of the store')

    const bug = thrownBy(() => db.prepare('SELECT nope FROM t').get())
    assert.equal(toSqliteStorageError(bug), bug)
  })

  test('the codes of a store that cannot write or read what it holds', () => {
    assert.deepEqual(
      [
        'SQLITE_FULL',
        'SQLITE_IOERR',
        'SQLITE_IOERR_WRITE',
        'SQLITE_CANTOPEN',
        'SQLITE_CORRUPT',
        'SQLITE_NOTADB',
        'SQLITE_READONLY_DBMOVED',
        'SQLITE_PERM',
      ].map(sqliteFault),
      ['disk_full', 'io_error', 'io_error', 'io_error', 'corrupt', 'corrupt', 'read_only', 'read_only'],
    )
    for (const code of ['SQLITE_BUSY', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'SQLITE_MISMATCH'])
      assert.equal(sqliteFault(code), undefined, code)
  })

  test('a store remembers a fault until its ping has written again', async () => {
    const storage = new SqliteStorage({ databaseUrl: ':memory:', durability: 'process' })
    try {
      const db = (storage as unknown as { db: Database.Database }).db
      db.pragma('query_only = ON')
      await assert.rejects(storage.pets.createPet({ name: 'Rex', categoryId: 1 }), (error: unknown) => {
        assert.ok(error instanceof StorageFaultError)
        return error.fault === 'read_only'
      })
      await assert.rejects(storage.ping(), (error: unknown) => error instanceof StorageFaultError && error.fault === 'read_only')
      // Reads still work: the fault is about writing.
      assert.deepEqual(await storage.pets.listPets({ limit: 1 }), [])
      await assert.rejects(storage.ping(), StorageFaultError, 'a read does not clear it')
      db.pragma('query_only = OFF')
      await storage.ping()
      await storage.ping()
    } finally {
      await storage.close()
    }
  })
})

describe('PostgreSQL', () => {
  test('the SQLSTATEs of a store that cannot write or read what it holds', () => {
    assert.deepEqual(['53100', '58030', '58P01', 'XX001', 'XX002', '25006'].map(postgresFault), [
      'disk_full',
      'io_error',
      'io_error',
      'corrupt',
      'corrupt',
      'read_only',
    ])
    for (const code of ['53300', '53200', '57014', '23505', '40001', 'XX000']) assert.equal(postgresFault(code), undefined, code)
    const full = toStorageError(Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' }))
    assert.ok(full instanceof StorageFaultError)
    assert.equal(full.fault, 'disk_full')
    // Still an outage without being a fault of the store: too many connections.
    const crowded = toStorageError(Object.assign(new Error('too many clients'), { code: '53300' }))
    assert.ok(crowded instanceof StorageUnavailableError)
    assert.equal(crowded instanceof StorageFaultError, false)
  })

  test('a write in a read-only transaction (as on a standby) is a read_only fault', async (t) => {
    if (!(await requireService(t, 'PostgreSQL'))) return
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    t.after(() => client.end())
    await client.query('BEGIN READ ONLY')
    const error = await client.query('CREATE TEMP TABLE t (v int)').then(
      () => assert.fail('a read-only transaction wrote'),
      (e: unknown) => e,
    )
    await client.query('ROLLBACK')
    const classified = toStorageError(error)
    assert.ok(classified instanceof StorageFaultError)
    assert.equal(classified.fault, 'read_only')
  })
})

test('StorageFaults.check: a failed probe keeps the fault, a fault seen meanwhile is kept', async () => {
  const faults = new StorageFaults((e) => e)
  await faults.check(
    () => undefined,
    () => assert.fail('no probe without a fault'),
  )
  faults.seen(new StorageFaultError('disk_full', new Error('full')))
  await assert.rejects(
    faults.check(
      () => assert.fail('no read after a fault'),
      () => {
        throw new StorageFaultError('disk_full', new Error('still full'))
      },
    ),
  )
  assert.equal(faults.current, 'disk_full')
  await faults.check(
    () => undefined,
    () => faults.seen(new StorageFaultError('io_error', new Error('another'))),
  )
  assert.equal(faults.current, 'io_error', 'a newer fault outlives the probe that ran beside it')
  await faults.check(
    () => undefined,
    () => undefined,
  )
  assert.equal(faults.current, undefined)
})
