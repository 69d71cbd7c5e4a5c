/**
 * Regression: several processes that open a new SQLite file at the same moment (CLI commands, or
 * the workers of `serve --workers`) all succeed. Before, one of two CLI `keys create` started
 * together on a fresh file failed once in CI with SQLITE_BUSY: SQLite answers BUSY without waiting
 * where waiting could deadlock (switching the file to WAL, migrating it), and the open gave up at
 * once. Now the open retries BUSY until its 5 s deadline (src/storage/sqlite/open-database.ts).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCli, useTempDir } from '../helpers/process.js'

const PROCESSES = 8
const ROUNDS = 3

test(`${PROCESSES} CLI processes creating keys on one new SQLite file at once all succeed (${ROUNDS} rounds)`, async (t) => {
  const dir = await useTempDir(t, 'animal-store-concurrent-open-')
  for (let round = 0; round < ROUNDS; round++) {
    const db = `${dir}/round-${round}.db`
    const results = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) =>
        runCli(['keys', 'create', '--plan', 'free', '--name', `p${i}`, '--json'], { db, env: {} }),
      ),
    )
    for (const r of results) assert.equal(r.code, 0, `round ${round}: ${r.stderr}`)
    const listed = await runCli(['keys', 'list', '--json'], { db, env: {} })
    assert.equal(listed.code, 0, listed.stderr)
    const ids = new Set((JSON.parse(listed.stdout) as { data: Array<{ id: string }> }).data.map((k) => k.id))
    assert.equal(ids.size, PROCESSES, `round ${round}: every process created its key`)
  }
})
