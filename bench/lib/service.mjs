// Starting the built service and the ceiling as real processes, creating the bench key, and seeding.
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { freePort, waitHealthy } from '../../tools/http.mjs'
import { createKeyWithCli, entryArgs } from '../../tools/service-cli.mjs'
import { serviceEnv } from '../../tools/service-env.mjs'
import { run, start, stop } from './children.mjs'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const DIST = join(ROOT, 'dist')

/** Limits far above anything the benchmark sends (the largest the service accepts). */
export const KEY_LIMITS = { perMinute: 1_000_000_000, perDay: 1_000_000_000 }

/** A clean environment: nothing from the caller's shell (DATABASE_URL, REDIS_URL, NODE_OPTIONS, ...) leaks in, nor from a .env file. */
const cleanEnv = (overrides) => serviceEnv(overrides, { minimal: true })

/** The environment of the service in a benchmark: production settings, info logging to `logFile`, no first key. */
export function benchServiceEnv({ port, databaseUrl, redisUrl, durability = 'process', logFile, extraEnv = {} }) {
  return cleanEnv({
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    DURABILITY: durability,
    LOG_LEVEL: 'info',
    LOG_FILE: logFile,
    BOOTSTRAP_KEY: 'false',
    ADMIN_PORT: '0', // idle in the benchmark; a free port, so that no two runs contend for 8081
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...extraEnv,
  })
}

/**
 * The node flags `npm start` gives the server it starts for the configuration `env` (its heap bound,
 * MAX_HEAP_MB: src/lifecycle/heap-bound.ts), read by the build's own code as the launcher reads it:
 * the benchmark measures the process as it runs in production. `dist` is the build's root (another
 * checkout's, for an A/B).
 */
export async function launchFlags(env, root = ROOT) {
  const { loadConfiguration } = await import(pathToFileURL(join(root, 'dist/config/config-file.js')).href)
  const { heapBoundFlags } = await import(pathToFileURL(join(root, 'dist/lifecycle/heap-bound.js')).href)
  return heapBoundFlags(loadConfiguration({ env, cwd: root }).config.maxHeapMb)
}

/**
 * Starts `node dist/server.js` pinned to `cpu` with production settings, and the node flags `npm
 * start` would give it (launchFlags; `nodeFlags` after them, so that they win). Rejects (with the
 * service's own last words) if it exits or is not healthy within 30 s.
 */
export async function startService(options) {
  const { databaseUrl, redisUrl, durability = 'process', logFile, cpu, nodeFlags = [], env: extraEnv = {}, workers } = options
  const port = await freePort()
  const env = benchServiceEnv({ port, databaseUrl, redisUrl, durability, logFile, extraEnv })
  // `workers`: `animal-store serve --workers N` (node:cluster: a primary and N worker processes),
  // whose primary gives the workers the same flags itself; `serve --workers 1` is the server's
  // own process, which takes them on its command line as `node dist/server.js` does (deployment.md).
  const entry = workers === undefined ? [join(DIST, 'server.js')] : [join(DIST, 'cli.js'), 'serve', '--workers', String(workers)]
  const launch = workers === undefined || workers === 1 ? await launchFlags(env) : []
  const child = start('taskset', ['-c', String(cpu), process.execPath, ...launch, ...nodeFlags, ...entry], { cwd: ROOT, env })
  try {
    await waitHealthy(port, child)
    if (workers !== undefined) await waitListening(logFile, workers, child)
  } catch (error) {
    await stop(child, 3000)
    throw error
  }
  const service = { child, pid: child.pid, port, logFile, died: null, options, restarts: 0 }
  watch(service)
  return service
}

/** Waits until `count` processes have logged that they listen (a cluster's workers; one log file, a pid per line). */
async function waitListening(logFile, count, child, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const pids = new Set()
    try {
      for (const line of readFileSync(logFile, 'utf8').split('\n')) if (line.includes('Server listening')) pids.add(JSON.parse(line).pid)
    } catch {
      // not written yet
    }
    if (pids.size >= count) return
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`${pids.size} of ${count} workers listening after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The pids of a process's children (a cluster primary's workers), from /proc/<pid>/stat. */
export function childPids(parent) {
  const out = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) out.push(Number(name))
    } catch {
      // the process ended meanwhile
    }
  }
  return out
}

function watch(service) {
  const { child } = service
  child.exited.then(({ code, signal }) => {
    if (child.stopping) return
    const last = (child.err || child.out).trim().split('\n').slice(-8).join(' | ')
    service.died =
      `the service exited by itself (${signal ? `signal ${signal}` : `code ${code}`}): ${last || 'no output on stdout/stderr'}` +
      `; its log ends with: ${logTail(service.logFile)}`
    process.stderr.write(`[bench] ${service.died}\n`)
  })
}

/** The last warn+ or shutdown lines of a pino log file (says e.g. which signal stopped the service). */
function logTail(file) {
  try {
    const size = statSync(file).size
    const fd = openSync(file, 'r')
    const buf = Buffer.alloc(Math.min(size, 64 * 1024))
    readSync(fd, buf, 0, buf.length, size - buf.length)
    closeSync(fd)
    const lines = buf
      .toString('utf8')
      .split('\n')
      .filter((l) => /"level":"(warn|error|fatal)"|shutting down|signal/.test(l))
    return lines.slice(-3).join(' | ').slice(0, 1500) || '(no warning, error or shutdown line)'
  } catch (error) {
    return `(log not readable: ${error.message})`
  }
}

/** Replaces a dead service by a new one with the same settings, in place (same object). */
export async function restartService(service) {
  const fresh = await startService(service.options)
  Object.assign(service, { child: fresh.child, pid: fresh.pid, port: fresh.port, died: null, restarts: service.restarts + 1 })
  watch(service)
  return service
}

/**
 * Runs `fn`; if the service died meanwhile (something outside the benchmark may stop it), restarts
 * it and runs `fn` again, at most `max` times over the service's life.
 */
export async function withRestart(service, fn, max = 2, log = () => {}, warmUp = async () => {}) {
  for (;;) {
    try {
      assertAlive(service)
      const result = await fn()
      assertAlive(service)
      return result
    } catch (error) {
      const dead = service.died || service.child.exitCode !== null || service.child.signalCode !== null
      if (!dead || service.restarts >= max) throw error
      log(
        `service died (${service.died ?? 'gone'}); restarting it (restart ${service.restarts + 1} of at most ${max}) and repeating the run`,
      )
      await restartService(service)
      await warmUp()
    }
  }
}

/** Throws if the service is gone (it died, or something else killed it). */
export function assertAlive(service) {
  if (service.died) throw new Error(service.died)
  if (service.child.exitCode !== null || service.child.signalCode !== null) {
    throw new Error(`the service is gone (${service.child.signalCode ?? `code ${service.child.exitCode}`})`)
  }
}

/** Starts bench/ceiling.mjs pinned to `cpu`, serving `captures` (see ceiling.mjs). */
export async function startCeiling(captures, dir, cpu) {
  const file = writeCaptures(captures, dir)
  const port = await freePort()
  return startListening('ceiling', [join(ROOT, 'bench/ceiling.mjs'), file, String(port)], { cpu, port })
}

/** The captures as a file for bench/ceiling.mjs and bench/peers/bare-fastify.mjs. */
export function writeCaptures(captures, dir) {
  const file = join(dir, `captures-${process.hrtime.bigint()}.json`)
  writeFileSync(file, JSON.stringify(captures))
  return file
}

/**
 * Starts a peer (bench/peers/, see there) pinned to `cpu`: `bare-fastify` replays `captures`,
 * `sqlite` serves the SQLite file `databaseUrl` (the service's, with its keys),
 * `pg-redis` serves the PostgreSQL database `databaseUrl` with the Redis `redisUrl` and the one key `key`.
 */
export async function startPeer({ kind, cpu, dir, captures, databaseUrl, redisUrl, key }) {
  const port = await freePort()
  if (kind === 'bare-fastify') {
    const args = [join(ROOT, 'bench/peers/bare-fastify.mjs'), writeCaptures(captures, dir), String(port)]
    return { kind, ...(await startListening('peer', args, { cpu, port })) }
  }
  if (kind === 'sqlite') {
    const args = [join(ROOT, 'bench/peers/sqlite-peer.mjs'), databaseUrl, String(port)]
    return { kind, ...(await startListening('peer', args, { cpu, port, env: cleanEnv({ NODE_ENV: 'production' }) })) }
  }
  if (kind === 'pg-redis') {
    const env = cleanEnv({ DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, PEER_API_KEY: key, NODE_ENV: 'production' })
    return { kind, ...(await startListening('peer', [join(ROOT, 'bench/peers/pg-redis-peer.mjs'), String(port)], { cpu, port, env })) }
  }
  throw new Error(`unknown peer ${kind}`)
}

/** `taskset -c CPU node <args>` until it prints "<what> listening" (10 s at most). */
async function startListening(what, args, { cpu, port, env }) {
  const child = start('taskset', ['-c', String(cpu), process.execPath, ...args], { cwd: ROOT, ...(env ? { env } : {}) })
  const deadline = Date.now() + 10_000
  while (!child.out.includes(`${what} listening`)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop(child, 1000)
      throw new Error(`${what} did not start: ${child.err || child.out || 'no output'}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { child, pid: child.pid, port }
}

/**
 * The CLI of the build in `dist`, run to its end with the environment `env`: the benchmark's way of
 * running it, for createKeyWithCli (tools/service-cli.mjs).
 *
 * @param {NodeJS.ProcessEnv} env
 * @param {string} [dist]
 * @returns {(args: string[]) => ReturnType<typeof run>}
 */
export const distCli =
  (env, dist = DIST) =>
  (args) =>
    run(process.execPath, [...entryArgs('cli', { dist }), ...args], { cwd: ROOT, env, timeoutMs: 30_000 })

/** The environment the benchmark's CLI runs with on `databaseUrl`. */
export const cliEnv = (databaseUrl) => cleanEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', BOOTSTRAP_KEY: 'false' })

/**
 * Creates an Enterprise key with limits far above the load. Uses the CLI (dist/cli.js) when it
 * exists; otherwise the same service functions from dist/ (newKey + openStorage + loadConfig).
 * Either way the storage is migrated as a side effect.
 */
export async function createBenchKey(databaseUrl) {
  let cliError
  if (existsSync(join(DIST, 'cli.js'))) {
    try {
      const created = await createKeyWithCli(distCli(cliEnv(databaseUrl)), { plan: 'enterprise', name: 'bench', ...KEY_LIMITS })
      return { key: created.key, id: created.id, via: 'dist/cli.js' }
    } catch (error) {
      cliError = error.message.trim().split('\n').slice(-3).join(' | ')
    }
  }
  const { loadConfig } = await import(pathToFileURL(join(DIST, 'config/config.js')).href)
  const { openStorage } = await import(pathToFileURL(join(DIST, 'storage/index.js')).href)
  const { newKey } = await import(pathToFileURL(join(DIST, 'keys/key-service.js')).href)
  const config = loadConfig({ DATABASE_URL: databaseUrl, BOOTSTRAP_KEY: 'false' })
  const storage = await openStorage(config)
  try {
    const { key, record } = newKey({ plan: 'enterprise', name: 'bench', ...KEY_LIMITS }, config.env, Date.now())
    await storage.keys.insertKey(record)
    return { key, id: record.id, via: cliError ? `dist/keys/key-service.js (CLI failed: ${cliError})` : 'dist/keys/key-service.js' }
  } finally {
    await storage.close()
  }
}

/** The deterministic catalogue: ~66% available, ~33% sold, 1% pending (a rare status). */
export const statusFor = (i) => (i % 100 === 0 ? 'pending' : i % 3 === 0 ? 'sold' : 'available')

/** The ids of the animals that can be ordered now, read from a service's SQLite file (WAL: a reader never blocks it). */
export async function availableIds(dbFile) {
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(dbFile, { readonly: true, fileMustExist: true })
  try {
    return db.prepare("SELECT id FROM pets WHERE status = 'available' ORDER BY id").pluck().all().map(String)
  } finally {
    db.close()
  }
}

/**
 * Seeds the SQLite file the service migrated, directly with better-sqlite3, in one transaction
 * (about a second per million rows), up to `size` rows in total. Call it with the service stopped.
 */
export async function seedSqlite(file, size) {
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    const have = db.prepare('SELECT COUNT(*) AS n FROM pets').get().n
    const insert = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)')
    const t = process.hrtime.bigint()
    db.transaction(() => {
      for (let i = have + 1; i <= size; i++) insert.run(`pet-${i}`, (i % 20) + 1, statusFor(i))
    })()
    const seconds = Number(process.hrtime.bigint() - t) / 1e9
    db.pragma('wal_checkpoint(TRUNCATE)')
    const { n, maxId } = db.prepare('SELECT COUNT(*) AS n, MAX(id) AS maxId FROM pets').get()
    return { rows: n, maxId, inserted: Math.max(0, size - have), seconds: Math.round(seconds * 100) / 100 }
  } finally {
    db.close()
  }
}

// The service's list queries (src/storage/sqlite/sqlite-storage.ts), for EXPLAIN QUERY PLAN only.
const PAGE_SQL = 'SELECT id, name, category_id, status FROM pets WHERE id > ? ORDER BY id LIMIT ?'
const PAGE_BY_STATUS_SQL = 'SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?'

/**
 * The growth queries for the catalogue in `file`: shallow pages, pages near the end (keyset
 * `after`), the status filter near the end, and the rare status near the end, each with SQLite's
 * plan for the service's SQL (SEARCH ... USING INDEX / INTEGER PRIMARY KEY = no scan, no sort).
 * Each query is a set of `distinct` paths (consecutive `after` values) used round-robin, more than
 * the service's page cache holds (512 pages of each kind when this was written), so every request
 * reaches SQLite rather than a cached page.
 */
export async function growthQueries(file, { quick = false, distinct = 2000 } = {}) {
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(file, { readonly: true })
  try {
    const rows = db.prepare('SELECT COUNT(*) AS n FROM pets').get().n
    const count = Math.max(1, Math.min(distinct, Math.floor(rows / 4)))
    const afterNearEnd = (status, remaining) =>
      status
        ? (db.prepare('SELECT id FROM pets WHERE status = ? ORDER BY id DESC LIMIT 1 OFFSET ?').get(status, remaining)?.id ?? 0)
        : (db.prepare('SELECT id FROM pets ORDER BY id DESC LIMIT 1 OFFSET ?').get(remaining)?.id ?? 0)
    const plan = (status, after, limit) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${status ? PAGE_BY_STATUS_SQL : PAGE_SQL}`)
        .all(...(status ? [status, after, limit + 1] : [after, limit + 1]))
        .map((r) => r.detail)
        .join('; ')
    const defs = [
      { id: 'shallow-page', limit: 20, first: count - 1 },
      { id: 'deep-page', limit: 20, first: afterNearEnd(undefined, 50) },
      { id: 'status-deep', limit: 100, status: 'available', first: afterNearEnd('available', 150) },
      { id: 'rare-status-deep', limit: 20, status: 'pending', first: afterNearEnd('pending', 30) },
    ]
    const out = defs.map((q) => {
      const afters = Array.from({ length: count }, (_, k) => Math.max(0, q.first - k))
      const paths = afters.map((after) => {
        const qs = new URLSearchParams({ limit: String(q.limit) })
        if (q.status) qs.set('status', q.status)
        qs.set('after', String(after))
        return `/v1/pets?${qs}`
      })
      const pattern = `/v1/pets?limit=${q.limit}${q.status ? `&status=${q.status}` : ''}&after={${afters[afters.length - 1]}..${afters[0]}}`
      return { id: q.id, pattern, paths, plan: plan(q.status, afters[0], q.limit) }
    })
    return quick ? out.slice(0, 2) : out
  } finally {
    db.close()
  }
}

/**
 * A fresh PostgreSQL database for the run (dropped first if a previous run left it), so the
 * benchmark never touches the data of the shared `test` database that other suites use.
 */
export async function createPgDatabase(baseUrl, name) {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 3000 })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await client.query(`CREATE DATABASE "${name}"`)
  } finally {
    await client.end()
  }
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export async function dropPgDatabase(baseUrl, name) {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 3000 })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  } finally {
    await client.end()
  }
}
