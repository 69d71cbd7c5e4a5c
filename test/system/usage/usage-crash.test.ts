/**
 * Usage history across a kill -9: counts are written every USAGE_FLUSH_MS, so a SIGKILL loses at
 * most what was counted since the last write, never what was written; a clean stop (SIGTERM)
 * writes everything. Read from the SQLite file itself (WAL: readable beside the server).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import { bearer, createKeyViaCli, startServer, useTempDir, waitFor } from '../helpers/process.js'

const FLUSH_MS = 1000

/** The allowed requests of `keyId` stored so far, in minute rows and in hour rows. */
function stored(db: string, keyId: string): { minutes: number; hours: number } {
  const file = new Database(db, { readonly: true, fileMustExist: true })
  try {
    const sum = (table: string) =>
      (file.prepare(`SELECT COALESCE(SUM(allowed), 0) AS n FROM ${table} WHERE key_id = ?`).get(keyId) as { n: number }).n
    return { minutes: sum('usage_minutes'), hours: sum('usage_hours') }
  } finally {
    file.close()
  }
}

async function send(url: string, key: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/v1/pets`, { headers: bearer(key), signal: AbortSignal.timeout(10_000) })
    assert.equal(res.status, 200)
    await res.arrayBuffer()
  }
}

test('kill -9 loses at most the counts since the last flush; a clean stop writes every count', { timeout: 120_000 }, async (t) => {
  const dir = await useTempDir(t, 'animal-store-usage-')
  const db = join(dir, 'store.db')
  const { id, key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'crash', perMinute: 100_000, perDay: 1_000_000 })
  const env = { USAGE_FLUSH_MS: String(FLUSH_MS) }

  const first = await startServer(t, { dir, db, env })
  const N = 20
  await send(first.url, key, N)
  // One flush has written the N counts (the flush interval is the most this can take, plus a little).
  assert.ok(await waitFor(() => stored(db, id).minutes === N, 10 * FLUSH_MS), `the first ${N} counts are stored`)
  const M = 15
  await send(first.url, key, M)
  await first.kill()

  const afterKill = stored(db, id)
  assert.equal(afterKill.minutes, afterKill.hours, 'minute and hour rows are written in one transaction')
  assert.ok(afterKill.minutes >= N, `nothing written is lost: ${afterKill.minutes} >= ${N}`)
  assert.ok(afterKill.minutes <= N + M, 'nothing counted twice')
  const lost = N + M - afterKill.minutes
  assert.ok(lost <= M, `lost ${lost}: at most what was sent after the last flush (${M})`)

  const second = await startServer(t, { dir, db, env })
  const K = 7
  await send(second.url, key, K)
  const exit = await second.stop('SIGTERM')
  assert.equal(exit.code, 0)
  assert.deepEqual(stored(db, id), { minutes: afterKill.minutes + K, hours: afterKill.minutes + K }, 'a clean stop writes every count')
})
