// The SQLite scenarios: the service with the in-memory limiter against the ceiling and a peer (bare Fastify, or with --sqlite-peer sqlite a hand-written service).
import { join } from 'node:path'
import { stop } from '../lib/children.mjs'
import { runScenarios } from '../lib/rounds.mjs'
import { SERVER_CPU } from '../lib/scenarios.mjs'
import { createBenchKey, seedSqlite, startService } from '../lib/service.mjs'

/** @typedef {import('../lib/rounds.mjs').Bench} Bench */

/**
 * The main section: every scenario on SQLite with the in-memory limiter, against the ceiling and the
 * bare Fastify peer; returns the catalogue it used (for the profile).
 * @param {Bench} bench
 */
export async function sqliteSection(bench, results) {
  const { opts, log, tmp } = bench
  const dbFile = join(tmp, 'main.db')
  const key = await createBenchKey(dbFile)
  results.keyCreatedVia = key.via
  const seed = await seedSqlite(dbFile, opts.catalogue)
  log(`SQLite: catalogue of ${seed.rows} pets seeded directly in ${seed.seconds}s; key via ${key.via}`)
  const service = await startService({
    env: opts.serviceEnv,
    nodeFlags: opts.serviceNodeFlags,
    databaseUrl: dbFile,
    logFile: join(tmp, 'service-sqlite.log'),
    cpu: SERVER_CPU,
  })
  const ctx = { getId: Math.floor(seed.maxId / 2) }
  const section = { backend: 'SQLite + in-memory limiter', catalogue: seed.rows, seed, scenarios: [] }
  results.sqlite = section
  try {
    // POST last: it grows the catalogue, which the GETs should not see.
    const ids = [...opts.scenarios].sort((a, b) => (a === 'post') - (b === 'post'))
    await runScenarios(bench, section, {
      service,
      key: key.key,
      ids,
      ctx,
      backend: 'sqlite',
      peerKind: opts.sqlitePeer,
      databaseUrl: dbFile,
    })
  } finally {
    await stop(service.child)
  }
  return { dbFile, key: key.key }
}

/**
 * A catalogue of its own (with the bench key), for a section run without the main one.
 * @param {Bench} bench
 */
export async function freshCatalogue(bench, name, size = bench.opts.catalogue) {
  const { tmp } = bench
  const dbFile = join(tmp, `${name}.db`)
  const key = await createBenchKey(dbFile)
  await seedSqlite(dbFile, size)
  return { dbFile, key: key.key }
}
