// The PostgreSQL + Redis scenarios.
import { join } from 'node:path'
import { request } from '../../tools/http.mjs'
import { findPids } from '../../tools/proc.mjs'
import { onCleanup, stop } from '../lib/children.mjs'
import { runScenarios } from '../lib/rounds.mjs'
import { PG_SCENARIOS, SERVER_CPU } from '../lib/scenarios.mjs'
import { createBenchKey, createPgDatabase, dropPgDatabase, startService } from '../lib/service.mjs'

/** @typedef {import('../lib/rounds.mjs').Bench} Bench */

/**
 * list20 and post on PostgreSQL with the Redis limiter, against the ceiling and the PG+Redis peer, on
 * a database of the run's own.
 * @param {Bench} bench
 */
export async function pgSection(bench, results) {
  const { opts, log, tmp } = bench
  const section = { backend: 'PostgreSQL + Redis limiter', status: 'not run', scenarios: [] }
  results.pg = section
  const dbName = opts.pgDatabase
  let databaseUrl
  try {
    databaseUrl = await createPgDatabase(opts.pgUrl, dbName)
  } catch (error) {
    section.reason = `PostgreSQL unavailable at ${opts.pgUrl}: ${error.message}`
    log(`PG+Redis: not run: ${section.reason}`)
    return
  }
  onCleanup(() => dropPgDatabase(opts.pgUrl, dbName))
  section.database = `${dbName} (created fresh for this run on ${new URL(opts.pgUrl).host}, dropped at the end)`
  let key
  let service
  try {
    key = await createBenchKey(databaseUrl)
    service = await startService({
      env: opts.serviceEnv,
      nodeFlags: opts.serviceNodeFlags,
      databaseUrl,
      redisUrl: opts.redisUrl,
      logFile: join(tmp, 'service-pg.log'),
      cpu: SERVER_CPU,
    })
  } catch (error) {
    section.reason = `the service did not start with DATABASE_URL=postgres://… and REDIS_URL=${opts.redisUrl}: ${error.message}`
    log(`PG+Redis: not run: ${section.reason}`)
    return
  }
  try {
    // Seeded through the API itself (engine-agnostic: no assumption about the PostgreSQL schema).
    const seedCount = Math.min(opts.catalogue, 2000)
    const t = Date.now()
    let next = 0
    const worker = async () => {
      while (next < seedCount) {
        const i = ++next
        const body = JSON.stringify({ name: `pet-${i}`, categoryId: (i % 20) + 1, status: i % 3 === 0 ? 'sold' : 'available' })
        const r = await request(service.port, {
          method: 'POST',
          path: '/v1/pets',
          body,
          headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        })
        if (r.status !== 201) throw new Error(`seeding POST answered ${r.status}: ${r.text.slice(0, 200)}`)
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    section.catalogue = seedCount
    section.seededVia = `POST /v1/pets x${seedCount} in ${((Date.now() - t) / 1000).toFixed(1)}s`
    log(`PG+Redis: ${section.seededVia}`)
    const ids = PG_SCENARIOS.filter((id) => opts.scenarios.includes(id))
    const ctx = {}
    const extraGroups = {
      // Our database's backends, and PostgreSQL's shared background processes (not other databases' backends).
      postgres: () =>
        findPids((cmd, comm) => comm === 'postgres' && (cmd.includes(` ${dbName} `) || !/\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(cmd))),
      redis: () => findPids((_cmd, comm) => comm === 'redis-server'),
    }
    await runScenarios(bench, section, { service, key: key.key, ids, ctx, backend: 'pg', peerKind: 'pg-redis', databaseUrl, extraGroups })
    section.status = 'ok'
  } catch (error) {
    section.status = 'not run'
    section.reason = `failed during the run: ${error.message}`
    log(`PG+Redis: ${section.reason}`)
  } finally {
    await stop(service.child)
  }
}
