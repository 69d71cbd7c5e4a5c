#!/usr/bin/env node
/**
 * What the filter of known secrets (src/keys/known-secrets.ts) costs an instance at start: the
 * time of its one query (KeyRepository.secretHashes) and of building the filter, the memory it
 * takes at the peak and what it keeps, for a store of N keys. The keys are written straight with
 * SQL (random-looking SHA-256 hashes), into a PostgreSQL schema of its own (dropped at the end)
 * or a SQLite file in a temporary directory (removed at the end). The longest stall of the event
 * loop is what a reload (once the filter is full) costs the requests of a running server.
 *
 *   npm run build && node --expose-gc bench/known-secrets-load.mjs [--keys 1000000] [--engine postgres|sqlite]
 *
 * PostgreSQL: DATABASE_URL_PG or postgres://postgres@127.0.0.1:5432/test. Prints one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import pg from 'pg'

const { values } = parseArgs({
  options: { keys: { type: 'string', default: '1000000' }, engine: { type: 'string', default: 'postgres' } },
})
const KEYS = Number(values.keys)
const PG_URL = process.env.DATABASE_URL_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const { KnownSecrets } = await import('../dist/keys/known-secrets.js')
const gc = globalThis.gc ?? (() => {})
const mb = (bytes) => Math.round(bytes / 1e5) / 10

/** Opens the store, fills it with KEYS keys; returns it and how to clean up. */
async function prepare() {
  if (values.engine === 'sqlite') {
    const { SqliteStorage } = await import('../dist/storage/sqlite/sqlite-storage.js')
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-known-'))
    const file = join(dir, 'store.db')
    const storage = new SqliteStorage({ databaseUrl: file, durability: 'process' })
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(file)
    const { createHash } = await import('node:crypto')
    const insert = db.prepare(
      `INSERT INTO api_keys (id, name, plan, per_minute, per_day, hash, prefix, quota_id, created_at, updated_at)
       VALUES (?, 'k', 'free', 60, 1000, ?, 'as_live_abcd', ?, 0, 0)`,
    )
    db.transaction(() => {
      for (let i = 0; i < KEYS; i++) insert.run(`key_${i}`, createHash('sha256').update(String(i)).digest('hex'), `key_${i}`)
    })()
    db.close()
    return { storage, cleanUp: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const { PostgresStorage } = await import('../dist/storage/postgres/postgres-storage.js')
  const schema = `animal_store_known_${process.pid}`
  const storage = await PostgresStorage.open({ databaseUrl: PG_URL, schema })
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    await client.query(
      `INSERT INTO ${schema}.api_keys (id, name, plan, per_minute, per_day, hash, prefix, quota_id, created_at, updated_at)
       SELECT 'key_' || i, 'k', 'free', 60, 1000, encode(sha256(i::text::bytea), 'hex'), 'as_live_abcd', 'key_' || i, 0, 0
         FROM generate_series(1, $1::int) AS i`,
      [KEYS],
    )
    await client.query(`ANALYZE ${schema}.api_keys`)
  } finally {
    await client.end()
  }
  const cleanUp = async () => {
    const c = new pg.Client({ connectionString: PG_URL })
    await c.connect()
    await c.query(`DROP SCHEMA ${schema} CASCADE`).finally(() => c.end())
  }
  return { storage, cleanUp }
}

const { storage, cleanUp } = await prepare()
try {
  // A first, untimed read: the table's pages in the database's cache, as on a server that runs.
  await storage.keys.secretHashes()
  gc()
  const peakBefore = process.resourceUsage().maxRSS * 1024
  let queryMs = 0
  let packedLength = 0
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  // The histogram's first tick only sets its baseline: a stall before it would not be seen.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const started = performance.now()
  const known = new KnownSecrets(async () => {
    const packed = await storage.keys.secretHashes()
    queryMs = performance.now() - started
    packedLength = packed.length
    return packed
  })
  await known.load()
  const totalMs = performance.now() - started
  delay.disable()
  const peak = process.resourceUsage().maxRSS * 1024
  process.stdout.write(
    `${JSON.stringify({
      engine: values.engine,
      keys: KEYS,
      queryMs: Math.round(queryMs),
      buildMs: Math.round(totalMs - queryMs),
      packedMB: mb(packedLength),
      peakRssGrowthMB: mb(Math.max(0, peak - peakBefore)),
      // The longest the event loop was held (the query's answer parsed, the filter built in turns).
      longestStallMs: Math.round(delay.max / 1e6),
      // What the instance keeps: the filter's bit array (the string is garbage once it is built).
      filter: known.stats,
    })}\n`,
  )
} finally {
  await storage.close()
  await cleanUp()
}
