import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { Db } from '../../src/storage/postgres/connection.js'
import { PG_URL, requireService } from '../helpers/services.js'

const TEXT = 'SELECT $1::int + 1 AS n'

/** One connection, so that what the server holds is what this pool's only client holds. */
async function oneConnection(t: import('node:test').TestContext): Promise<Db | undefined> {
  if (!(await requireService(t, 'PostgreSQL'))) return undefined
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1 })
  t.after(() => pool.end())
  return new Db(pool)
}

const prepared = async (db: Db) =>
  (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = 'SELECT $1::int + 1 AS n'"))[0]!.n

test('queryNamed prepares a statement once per connection', async (t) => {
  const db = await oneConnection(t)
  if (db === undefined) return
  for (let i = 0; i < 3; i++) assert.deepEqual(await db.queryNamed(TEXT, [i]), [{ n: i + 1 }])
  assert.equal(await prepared(db), 1)
})

test('a prepared statement lost by the server (a pooler in transaction mode) is sent again unnamed, and so is every later one', async (t) => {
  const db = await oneConnection(t)
  if (db === undefined) return
  const warnings: string[] = []
  const onWarning = (warning: Error & { code?: string }) => warnings.push(warning.code ?? '')
  process.on('warning', onWarning)
  t.after(() => process.off('warning', onWarning))
  assert.deepEqual(await db.queryNamed(TEXT, [1]), [{ n: 2 }])
  await db.query('DEALLOCATE ALL') // behind the client's back: it still thinks the statement is there (26000 next)
  assert.deepEqual(await db.queryNamed(TEXT, [2]), [{ n: 3 }])
  assert.deepEqual(await db.queryNamed(TEXT, [3]), [{ n: 4 }])
  assert.equal(await prepared(db), 0, 'not prepared again')
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(warnings, ['ANIMAL_STORE_UNNAMED_STATEMENTS'])
})

test('a statement already prepared under its name on the server (42P05: another client of a pooler prepared it there) is sent unnamed', async (t) => {
  const db = await oneConnection(t)
  if (db === undefined) return
  assert.deepEqual(await db.queryNamed(TEXT, [1]), [{ n: 2 }])
  // The server keeps the statement; the client is made to forget it, as a client whose pooler
  // gives it a server connection where another client prepared the same name.
  const client = await db.pool.connect()
  ;(client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements = {}
  client.release()
  assert.deepEqual(await db.queryNamed(TEXT, [5]), [{ n: 6 }])
  assert.deepEqual(await db.queryNamed('SELECT $1::int + 2 AS n', [1]), [{ n: 3 }], 'and every later statement goes unnamed')
  assert.equal(
    (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%+ 2 AS n'"))[0]!.n,
    0,
    'the later statement was not prepared',
  )
})
