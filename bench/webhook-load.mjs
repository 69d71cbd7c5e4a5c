#!/usr/bin/env node
import { execFileSync } from 'node:child_process'
// What webhook endpoints that never answer cost the write path: the built server (dist/server.js,
// or --dist DIR, pinned to CPU 1) with 0, 1 and 10 endpoints (--endpoints) subscribed to every
// event type and pointing at a "black hole" on 127.0.0.1 (a net.Server of this process that
// accepts each connection and never answers), so that every delivery attempt runs to the service's
// WEBHOOK_TIMEOUT_MS (its default, 10 s), under two loads from CPU 0: wrk POST /v1/pets (the
// benchmark's `post` scenario) and bench/order-flow.mjs (place, then cancel or complete).
// Each run is a fresh server on a fresh copy of a prepared database (key, catalogue, N endpoints),
// SQLite (a file), and with --pg also PostgreSQL + Redis (databases of the run's own, dropped at
// the end); runs go endpoint count by endpoint count within a round (0,1,10, 0,1,10, ...) so that
// a drift of the machine hits every count alike. Reports per engine, load and count: req/s, p99,
// the server's CPU per request (utime+stime from /proc over the measured window / requests), its
// VmHWM, its /metrics (admin listener) at the end (animal_store_webhook_deliveries_total by
// outcome, deliveries pending, events the endpoint furthest behind has not reached), the black hole's connections, and each
// figure's ratio to the first count's (0 endpoints) of the same round. Loopback only, bounded (a
// hard deadline); every child, database and temp dir is removed at the end, on an error and on Ctrl-C.
//
//   node bench/webhook-load.mjs [--dist dist] [--pg] [--endpoints 0,1,10] [--rounds 3] [--duration 10] [--warmup 5]
//                               [--loads post,orders] [--out DIR]
//
// Not part of `npm run bench`. bench/README.md says what it measures; `--help` lists every option.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import os, { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { freePort, request, waitHealthy } from '../tools/http.mjs'
import { CLK_TCK, findPids, readProcTimes } from '../tools/proc.mjs'
import { createKeyWithCli } from '../tools/service-cli.mjs'
import { serviceEnv } from '../tools/service-env.mjs'
import { installGuards, onCleanup, shutdown, start, stop } from './lib/children.mjs'
import { measured, runOrderFlow, runWrk, waitQuiet } from './lib/load.mjs'
import { harnessGroups, median, round2, round3 } from './lib/rounds.mjs'
import { LOAD_CPU, SERVER_CPU, SQLITE_SCENARIOS } from './lib/scenarios.mjs'
import { availableIds, cliEnv, createPgDatabase, distCli, dropPgDatabase, KEY_LIMITS, ROOT, seedSqlite } from './lib/service.mjs'

const OPTIONS = {
  dist: { type: 'string', default: 'dist', help: 'the build to measure (its server.js and cli.js), e.g. an old worktree’s dist' },
  endpoints: { type: 'string', default: '0,1,10', help: 'comma list of endpoint counts; ratios are to the first (0)' },
  receiver: {
    type: 'string',
    default: 'dead',
    help: 'dead: the endpoints point at a black hole (accepts, never answers); live: at a receiver that answers 204 at once',
  },
  tls: {
    type: 'boolean',
    default: false,
    help: 'with --receiver live: the receiver speaks https (a self-signed certificate for 127.0.0.1 made with openssl, trusted by the server through NODE_EXTRA_CA_CERTS), as receivers on the internet must',
  },
  drain: {
    type: 'string',
    default: '10',
    help: 'with --receiver live: seconds after each run with endpoints in which the server, with no request, delivers its backlog (attempts a second, its CPU per attempt); 0: none',
  },
  rounds: { type: 'string', default: '3', help: 'rounds; each runs every load with every endpoint count' },
  duration: { type: 'string', default: '10', help: 'measured seconds per run, integer' },
  warmup: { type: 'string', default: '5', help: 'seconds of the same load before each measured run (not measured), integer' },
  loads: { type: 'string', default: 'post,orders', help: 'comma list of post (wrk POST /v1/pets), orders (bench/order-flow.mjs)' },
  connections: { type: 'string', default: '50', help: 'wrk connections of the POST load' },
  'order-connections': { type: 'string', default: '16', help: 'connections of the order flow, each over animals of its own' },
  catalogue: { type: 'string', default: '100000', help: 'SQLite: pets seeded directly (~66% available), for the order flow' },
  'pg-catalogue': { type: 'string', default: '20000', help: 'PostgreSQL: available pets seeded through POST /v1/pets, for the order flow' },
  pg: { type: 'boolean', default: false, help: 'also PostgreSQL + Redis (after SQLite)' },
  'pg-url': {
    type: 'string',
    default: 'postgres://postgres@127.0.0.1:5432/test',
    help: 'PostgreSQL server (a role allowed to create databases)',
  },
  'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379', help: 'Redis of the PostgreSQL runs' },
  'void-threshold': { type: 'string', default: '3', help: 'CPU used by other processes, % of one core, above which a run is void' },
  'max-retries': { type: 'string', default: '1', help: 'reruns of a void run, at once' },
  'quiet-wait': { type: 'string', default: '120', help: 'max seconds to wait for a quiet machine before each run' },
  'max-minutes': { type: 'string', default: '90', help: 'hard deadline: every child stopped, what was measured written' },
  out: { type: 'string', help: 'directory for webhook-load-<date>.json and .md (default a new temp dir, printed)' },
  help: { type: 'boolean', default: false, help: 'this list' },
}
const { values: options } = parseArgs({ options: Object.fromEntries(Object.entries(OPTIONS).map(([k, { help, ...v }]) => [k, v])) })
if (options.help) {
  process.stdout.write('node bench/webhook-load.mjs [options]\n\n')
  for (const [name, o] of Object.entries(OPTIONS))
    process.stdout.write(`  --${name}${o.type === 'string' ? ` (${o.default ?? 'none'})` : ''}\n      ${o.help}\n`)
  process.exit(0)
}
const integer = (name, min) => {
  const n = Number(options[name])
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, not ${options[name]}`)
  return n
}
const DIST = resolve(ROOT, options.dist)
const ROUNDS = integer('rounds', 1)
const DURATION = integer('duration', 1)
const WARMUP = integer('warmup', 0)
const DRAIN = integer('drain', 0)
const CONNECTIONS = integer('connections', 1)
const ORDER_CONNECTIONS = integer('order-connections', 1)
const MAX_RETRIES = integer('max-retries', 0)
const COUNTS = [...new Set(options.endpoints.split(',').map((s) => Number(s.trim())))]
if (COUNTS.length === 0 || COUNTS.some((n) => !Number.isInteger(n) || n < 0 || n > 100))
  throw new Error(`--endpoints: a comma list of counts 0..100, not ${options.endpoints}`)
const LOADS = options.loads.split(',').map((s) => s.trim())
if (LOADS.length === 0 || LOADS.some((l) => !['post', 'orders'].includes(l)))
  throw new Error(`--loads: post and/or orders, not ${options.loads}`)
if (!existsSync(join(DIST, 'server.js')) || !existsSync(join(DIST, 'cli.js')))
  throw new Error(`${DIST}: no server.js and cli.js (npm run build)`)
const POST = SQLITE_SCENARIOS.post

const say = (what) => process.stderr.write(`[webhook-load ${new Date().toISOString().slice(11, 19)}] ${what}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const work = mkdtempSync(join(tmpdir(), 'webhook-load-'))
onCleanup(() => rmSync(work, { recursive: true, force: true }))
const outDir = options.out ? resolve(options.out) : mkdtempSync(join(tmpdir(), 'webhook-load-results-'))
mkdirSync(outDir, { recursive: true })
const stamp = new Date().toISOString().slice(0, 10)
const files = { json: join(outDir, `webhook-load-${stamp}.json`), md: join(outDir, `webhook-load-${stamp}.md`) }

const results = {
  script: 'bench/webhook-load.mjs',
  startedAt: new Date().toISOString(),
  dist: { path: DIST, builtAt: statSync(join(DIST, 'server.js')).mtime.toISOString() },
  options: { ...options, endpoints: COUNTS, loads: LOADS },
  machine: { cpus: os.cpus().length, node: process.version, kernel: os.release(), loadavgAtStart: os.loadavg().map(round2) },
  service: {
    env: 'NODE_ENV=production LOG_LEVEL=info DURABILITY=process WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (WEBHOOK_TIMEOUT_MS, WEBHOOK_CONCURRENCY: defaults)',
    cpu: SERVER_CPU,
    loadCpu: LOAD_CPU,
  },
  engines: {},
  runs: [],
}

/** Writes what was measured so far (also on an abort: the deadline, Ctrl-C, an error). */
function writeResults(partialReason) {
  if (partialReason) {
    results.partial = partialReason
    for (const [engineId, section] of Object.entries(results.engines))
      if (!section.summary && results.runs.some((r) => r.engine === engineId))
        section.summary = Object.fromEntries(LOADS.map((load) => [load, summarise(engineId, load)]))
  }
  results.endedAt = new Date().toISOString()
  const md = markdown()
  writeFileSync(files.json, `${JSON.stringify(results, null, 1)}\n`)
  writeFileSync(files.md, md)
  return md
}
installGuards(Number(options['max-minutes']) * 60_000, async (why) => {
  writeResults(why)
  say(`partial results in ${files.json} and ${files.md}`)
})

// ---------------------------------------------------------------------------------------------
// The receiver. Dead (the default), a black hole: accepts every connection, reads what comes,
// never answers; a delivery attempt to it ends at WEBHOOK_TIMEOUT_MS, when the service closes the
// connection. Live (--receiver live): an HTTP server that answers every request 204 once its body
// has arrived, the cheapest receiver there is: what the same endpoints cost when they work.

if (!['dead', 'live'].includes(options.receiver)) throw new Error(`--receiver must be dead or live, not ${options.receiver}`)
const LIVE = options.receiver === 'live'
if (options.tls && !LIVE) throw new Error('--tls needs --receiver live')
/** With --tls, the receiver's certificate and key (PEM files in the work dir), for 127.0.0.1 only. */
const TLS = options.tls ? selfSignedCertificate(work) : undefined
const answer204 = (req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(204)
    res.end()
  })
}
const liveServer = () =>
  TLS === undefined
    ? http.createServer(answer204)
    : https.createServer({ cert: readFileSync(TLS.cert), key: readFileSync(TLS.key) }, answer204)
const blackHole = { accepted: 0, open: 0, sockets: new Set(), server: LIVE ? liveServer() : net.createServer() }
// A TLS server's 'connection' is the TCP socket's, before the handshake: connections counted alike.
blackHole.server.on('connection', (socket) => {
  blackHole.accepted++
  blackHole.open++
  blackHole.sockets.add(socket)
  socket.on('error', () => {})
  socket.on('close', () => {
    blackHole.open--
    blackHole.sockets.delete(socket)
  })
  if (!LIVE) socket.resume()
})
await new Promise((ok, fail) => {
  blackHole.server.once('error', fail)
  blackHole.server.listen({ port: 0, host: '127.0.0.1' }, ok)
})
blackHole.port = blackHole.server.address().port
onCleanup(async () => {
  for (const socket of blackHole.sockets) socket.destroy()
  await new Promise((r) => blackHole.server.close(r))
})
results.receiver = TLS === undefined ? options.receiver : `${options.receiver} (https)`
results.blackHole = LIVE
  ? `127.0.0.1:${blackHole.port} (${TLS === undefined ? 'http' : 'https'}.Server of this process: answers 204 once a request's body has arrived)`
  : `127.0.0.1:${blackHole.port} (net.Server of this process: accepts, reads, never answers)`

// ---------------------------------------------------------------------------------------------
// The service and its CLI (the build under test).

/** The CLI of the build under test on `databaseUrl`, allowed to name a loopback endpoint. */
const cli = (databaseUrl) => distCli({ ...cliEnv(databaseUrl), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, DIST)

/** `webhooks create` of every event type, `count` times, pointing at the black hole. */
async function createEndpoints(databaseUrl, count) {
  const ids = []
  for (let i = 1; i <= count; i++) {
    const url = `${TLS === undefined ? 'http' : 'https'}://127.0.0.1:${blackHole.port}/hook/${i}`
    const r = await cli(databaseUrl)(['webhooks', 'create', '--url', url, '--events', '*', '--description', `webhook-load ${i}`, '--json'])
    if (r.code !== 0) throw new Error(`webhooks create failed (${r.code ?? r.signal}): ${(r.stderr || r.stdout).trim()}`)
    ids.push(JSON.parse(r.stdout).endpoint.id)
  }
  return ids
}

/**
 * `taskset -c 1 node DIST/server.js` with the benchmark's production settings (as lib/service.mjs'
 * startService, which starts dist/ only), the admin listener on a port of its own for /metrics.
 */
async function startServer({ databaseUrl, redisUrl, logFile }) {
  const port = await freePort()
  let adminPort = await freePort()
  while (adminPort === port) adminPort = await freePort()
  const env = serviceEnv(
    {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      DATABASE_URL: databaseUrl,
      DURABILITY: 'process',
      LOG_LEVEL: 'info',
      LOG_FILE: logFile,
      BOOTSTRAP_KEY: 'false',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      ...(TLS === undefined ? {} : { NODE_EXTRA_CA_CERTS: TLS.cert }),
    },
    { minimal: true },
  )
  const child = start('taskset', ['-c', String(SERVER_CPU), process.execPath, join(DIST, 'server.js')], { cwd: ROOT, env })
  try {
    await waitHealthy(port, child)
    await waitHealthy(adminPort, child)
  } catch (error) {
    await stop(child, 3000)
    throw error
  }
  return { child, pid: child.pid, port, adminPort }
}

/** The webhook figures of the server's /metrics (admin listener), and how long the scrape took. */
async function scrapeMetrics(adminPort) {
  const t = performance.now()
  const r = await request(adminPort, { path: '/metrics', timeoutMs: 30_000 })
  const ms = Math.round(performance.now() - t)
  if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}`)
  const out = { scrapeMs: ms, deliveries: {}, pending: null, oldestPendingSeconds: null, undispatched: null, heapUsedMb: null }
  for (const line of r.text.split('\n')) {
    let m = /^animal_store_webhook_deliveries_total\{outcome="([^"]+)"\} (\S+)$/.exec(line)
    if (m) out.deliveries[m[1]] = Number(m[2])
    m = /^animal_store_webhook_(deliveries_pending|oldest_pending_seconds|events_undispatched) (\S+)$/.exec(line)
    if (m)
      out[{ deliveries_pending: 'pending', oldest_pending_seconds: 'oldestPendingSeconds', events_undispatched: 'undispatched' }[m[1]]] =
        Number(m[2])
    m = /^animal_store_nodejs_heap_size_used_bytes (\S+)$/.exec(line)
    if (m) out.heapUsedMb = round2(Number(m[1]) / 2 ** 20)
  }
  if (out.oldestPendingSeconds !== null) out.oldestPendingSeconds = round2(out.oldestPendingSeconds)
  return out
}

/** Warn and error lines of a pino log file: how many, and the first few distinct messages. */
function logWarnings(file) {
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return { count: 0, messages: [] }
  }
  const messages = new Set()
  let count = 0
  for (const line of text.split('\n')) {
    if (!/"level":"(warn|error|fatal)"/.test(line)) continue
    count++
    if (messages.size < 5) {
      try {
        messages.add(String(JSON.parse(line).msg).slice(0, 200))
      } catch {
        messages.add(line.slice(0, 200))
      }
    }
  }
  return { count, messages: [...messages] }
}

// ---------------------------------------------------------------------------------------------
// The engines: a prepared database per endpoint count (key, catalogue, endpoints), copied per run.

const fileMb = (...paths) => round2(paths.reduce((sum, p) => sum + (existsSync(p) ? statSync(p).size : 0), 0) / 2 ** 20)

/** A SQLite file with everything in it (the WAL checkpointed), so that one file is the whole database. */
function checkpoint(file) {
  const db = new Database(file)
  try {
    db.pragma('wal_checkpoint(TRUNCATE)')
  } finally {
    db.close()
  }
}

const removeSqlite = (file) => {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true })
}

async function prepareSqlite() {
  const base = join(work, 'base.db')
  const key = await createKeyWithCli(cli(base), { plan: 'enterprise', name: 'webhook-load', ...KEY_LIMITS })
  const seed = await seedSqlite(base, Number(options.catalogue))
  const ids = await availableIds(base)
  say(`SQLite: ${seed.rows} pets seeded in ${seed.seconds}s, ${ids.length} available`)
  const templates = new Map()
  for (const n of COUNTS) {
    const file = join(work, `template-${n}.db`)
    copyFileSync(base, file)
    await createEndpoints(file, n)
    checkpoint(file)
    templates.set(n, file)
  }
  return {
    name: 'SQLite (embedded file) + in-memory limiter',
    key: key.key,
    ids,
    setup: {
      catalogue: seed.rows,
      available: ids.length,
      seededVia: `better-sqlite3 in ${seed.seconds}s`,
      keyVia: 'dist cli.js keys create',
    },
    async clone(n) {
      const file = join(work, 'run.db')
      removeSqlite(file)
      copyFileSync(templates.get(n), file)
      return { databaseUrl: file, sizeMb: async () => fileMb(file, `${file}-wal`), dispose: async () => removeSqlite(file) }
    },
    groups: () => ({}),
    dispose: async () => {},
  }
}

/** `CREATE DATABASE name TEMPLATE template` (dropped first), retried while the template's last sessions end. */
async function clonePgDatabase(name, template) {
  const { default: pg } = await import('pg')
  for (let i = 0; ; i++) {
    const client = new pg.Client({ connectionString: options['pg-url'], connectionTimeoutMillis: 3000 })
    await client.connect()
    try {
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`)
      return
    } catch (error) {
      if (!/being accessed by other users/.test(error.message) || i >= 40) throw error
    } finally {
      await client.end()
    }
    await sleep(250)
  }
}

const pgUrlOf = (name) => {
  const url = new URL(options['pg-url'])
  url.pathname = `/${name}`
  return url.toString()
}

async function pgSizeMb(name) {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: options['pg-url'], connectionTimeoutMillis: 3000 })
  await client.connect()
  try {
    const r = await client.query('SELECT pg_database_size($1) AS bytes', [name])
    return round2(Number(r.rows[0].bytes) / 2 ** 20)
  } finally {
    await client.end()
  }
}

async function preparePg() {
  const prefix = `animal_store_webhook_load_${process.pid}`
  const names = new Set()
  onCleanup(async () => {
    for (const name of names) await dropPgDatabase(options['pg-url'], name)
  })
  const baseName = `${prefix}_base`
  names.add(baseName)
  const baseUrl = await createPgDatabase(options['pg-url'], baseName)
  const key = await createKeyWithCli(cli(baseUrl), { plan: 'enterprise', name: 'webhook-load', ...KEY_LIMITS })
  // Seeded through the API (as bench/sections/pg.mjs: no assumption about the schema), before any
  // endpoint exists; every animal for sale, their ids from the answers.
  const count = Number(options['pg-catalogue'])
  const server = await startServer({ databaseUrl: baseUrl, redisUrl: options['redis-url'], logFile: join(work, 'service-pg-seed.log') })
  const ids = []
  const t = Date.now()
  try {
    let next = 0
    const worker = async () => {
      while (next < count) {
        const i = ++next
        const r = await fetch(`http://127.0.0.1:${server.port}/v1/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `pet-${i}`, categoryId: (i % 20) + 1, status: 'available' }),
        })
        const text = await r.text()
        if (r.status !== 201) throw new Error(`seeding POST answered ${r.status}: ${text.slice(0, 200)}`)
        ids.push(JSON.parse(text).id)
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
  } finally {
    await stop(server.child)
  }
  ids.sort((a, b) => a - b)
  const seconds = round2((Date.now() - t) / 1000)
  say(`PostgreSQL: ${ids.length} available pets seeded through POST /v1/pets in ${seconds}s`)
  const templates = new Map()
  for (const n of COUNTS) {
    const name = `${prefix}_t${n}`
    names.add(name)
    await clonePgDatabase(name, baseName)
    await createEndpoints(pgUrlOf(name), n)
    templates.set(n, name)
  }
  const runName = `${prefix}_run`
  names.add(runName)
  return {
    name: 'PostgreSQL + Redis limiter',
    key: key.key,
    ids: ids.map(String),
    redisUrl: options['redis-url'],
    setup: {
      catalogue: ids.length,
      available: ids.length,
      seededVia: `POST /v1/pets x${ids.length} in ${seconds}s`,
      databases: `${prefix}_* (created for this run on ${new URL(options['pg-url']).host}, dropped at the end)`,
    },
    async clone(n) {
      await clonePgDatabase(runName, templates.get(n))
      return {
        databaseUrl: pgUrlOf(runName),
        name: runName,
        sizeMb: () => pgSizeMb(runName),
        dispose: () => dropPgDatabase(options['pg-url'], runName),
      }
    },
    // The run database's backends and PostgreSQL's background processes (not other databases'
    // backends), and Redis: the benchmark's own work during a window (as bench/sections/pg.mjs).
    groups: () => ({
      postgres: () =>
        findPids((cmd, comm) => comm === 'postgres' && (cmd.includes(` ${runName} `) || !/\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(cmd))),
      redis: () => findPids((_cmd, comm) => comm === 'redis-server'),
    }),
    dispose: async () => {
      for (const name of names) await dropPgDatabase(options['pg-url'], name)
      names.clear()
    },
  }
}

// ---------------------------------------------------------------------------------------------
// One run: a fresh server on a fresh copy, the warm-up, the measured window, /metrics, stop.

const attemptsOf = (metrics) => Object.values(metrics.deliveries).reduce((a, b) => a + b, 0)

/**
 * After the load, with a live receiver: DRAIN seconds in which the server does nothing but deliver
 * its backlog: the attempts it made (every outcome) and its own CPU (utime+stime) per attempt.
 */
async function measureDrain(server, before) {
  const cpu0 = readProcTimes(server.pid)?.own
  const started = performance.now()
  await new Promise((r) => setTimeout(r, DRAIN * 1000))
  const cpu1 = readProcTimes(server.pid)?.own
  const seconds = (performance.now() - started) / 1000
  const attempts = attemptsOf(await scrapeMetrics(server.adminPort)) - attemptsOf(before)
  return {
    seconds: round2(seconds),
    attempts,
    attemptsPerSecond: round2(attempts / seconds),
    cpuUsPerAttempt: attempts > 0 && cpu0 !== undefined && cpu1 !== undefined ? round2((((cpu1 - cpu0) / CLK_TCK) * 1e6) / attempts) : null,
  }
}

async function measureRun(engineId, engine, load, n, round, attempt) {
  const db = await engine.clone(n)
  let server
  try {
    const waited = await waitQuiet({
      groups: harnessGroups(engine.groups()),
      thresholdPct: Number(options['void-threshold']),
      windowMs: 1000,
      maxWaitMs: Number(options['quiet-wait']) * 1000,
      onWait: (pct, s) => say(`waiting for a quiet machine (others use ${pct}% of a core; ${s}s so far)`),
    })
    const logFile = join(work, `service-${engineId}-${load}-${n}-r${round}-${attempt}.log`)
    const holeAtStart = blackHole.accepted
    server = await startServer({ databaseUrl: db.databaseUrl, redisUrl: engine.redisUrl, logFile })
    const groups = harnessGroups({ server: () => [server.pid], ...engine.groups() })
    const window = { groups, memoryPid: server.pid, thresholdPct: Number(options['void-threshold']) }
    let m
    let holeBefore
    if (load === 'post') {
      const wrk = (seconds) =>
        runWrk({
          port: server.port,
          path: POST.path(),
          method: POST.method,
          body: POST.body,
          key: engine.key,
          seconds,
          connections: CONNECTIONS,
          cpu: LOAD_CPU,
        })
      if (WARMUP > 0) await wrk(WARMUP)
      holeBefore = blackHole.accepted
      m = await measured(window, () => wrk(DURATION))
    } else {
      // Warm-up on one half of the animals, the measured run on the other: the animals the warm-up
      // sold are not ordered again (no 409s), and the measured window holds the measured requests only.
      const half = Math.floor(engine.ids.length / 2)
      const flow = (ids, seconds, part) => {
        const idsFile = join(work, `order-ids-${part}.txt`)
        writeFileSync(idsFile, `${ids.join('\n')}\n`)
        return runOrderFlow({
          port: server.port,
          key: engine.key,
          idsFile,
          connections: ORDER_CONNECTIONS,
          seconds,
          warmup: 0,
          cpu: LOAD_CPU,
        })
      }
      if (WARMUP > 0) await flow(engine.ids.slice(0, half), WARMUP, 'warmup')
      holeBefore = blackHole.accepted
      m = await measured(window, () => flow(engine.ids.slice(half), DURATION, 'measured'))
    }
    const holeMeasured = blackHole.accepted - holeBefore
    const metrics = await scrapeMetrics(server.adminPort)
    const holeTotal = blackHole.accepted - holeAtStart
    const holeOpen = blackHole.open
    const drain = LIVE && n > 0 && DRAIN > 0 ? await measureDrain(server, metrics) : null
    const dbMb = await db.sizeMb()
    const serverPct = m.cpu.groupsPct.server ?? 0
    const entry = {
      engine: engineId,
      load,
      endpoints: n,
      round,
      attempt,
      quietWait: waited,
      rps: m.rps,
      ...(load === 'orders' ? { flowsPerSecond: m.flowsPerSecond, flows: m.flows, completed: m.completed, cancelled: m.cancelled } : {}),
      requests: m.requests,
      p50Ms: m.p50Ms,
      p99Ms: m.p99Ms,
      maxMs: m.maxMs,
      serverCpuPct: serverPct,
      cpuUsPerRequest: m.requests ? round2(((serverPct / 100) * m.cpu.seconds * 1e6) / m.requests) : null,
      ...(m.cpu.groupsPct.postgres !== undefined
        ? {
            backingCpuUsPerRequest: m.requests
              ? round2((((m.cpu.groupsPct.postgres + (m.cpu.groupsPct.redis ?? 0)) / 100) * m.cpu.seconds * 1e6) / m.requests)
              : null,
          }
        : {}),
      vmHwmMb: m.memory.hwmMb,
      peakRssMb: m.memory.peakRssMb,
      httpErrors:
        load === 'post' ? m.errorStatus + m.socketErrors : Object.values(m.unexpectedStatus).reduce((a, b) => a + b, 0) + m.socketErrors,
      ...(load === 'orders' ? { unexpectedStatus: m.unexpectedStatus } : {}),
      metrics,
      blackHole: { duringMeasurement: holeMeasured, sinceStart: holeTotal, openAtEnd: holeOpen },
      drain,
      databaseMb: dbMb,
      cpu: m.cpu,
      void: m.voidReason !== null,
      voidReason: m.voidReason,
    }
    await stop(server.child)
    server = undefined
    entry.logWarnings = logWarnings(logFile)
    rmSync(logFile, { force: true })
    return entry
  } finally {
    if (server) await stop(server.child)
    await db.dispose()
  }
}

// ---------------------------------------------------------------------------------------------
// Summary and report.

const LOAD_NAMES = { post: 'POST /v1/pets (wrk)', orders: 'order flow (place, then cancel or complete)' }

/** Per engine, load and count: medians over the valid runs (else over all, marked) and ratios to the first count, paired by round. */
function summarise(engineId, load) {
  const finals = results.runs.filter((r) => r.engine === engineId && r.load === load && r.final)
  const cell = (n) => finals.filter((r) => r.endpoints === n)
  const basisOf = (rows) => {
    const valid = rows.filter((r) => !r.void)
    return valid.length ? valid : rows
  }
  const base = cell(COUNTS[0])
  const ratio = (n, f) => {
    const pairs = []
    for (const r of cell(n)) {
      const b = base.find((x) => x.round === r.round)
      if (b && f(r) !== null && f(b)) pairs.push({ valid: !r.void && !b.void, x: f(r) / f(b) })
    }
    const valid = pairs.filter((p) => p.valid)
    return round3(median((valid.length ? valid : pairs).map((p) => p.x)))
  }
  return COUNTS.map((n) => {
    const rows = cell(n)
    const basis = basisOf(rows)
    const pick = (f) => median(basis.map(f).filter((x) => x !== null && x !== undefined))
    const outcomes = new Set(basis.flatMap((r) => Object.keys(r.metrics.deliveries)))
    return {
      endpoints: n,
      runs: rows.length,
      validRuns: rows.filter((r) => !r.void).length,
      fromVoidRuns: rows.length > 0 && rows.every((r) => r.void),
      rps: round2(pick((r) => r.rps)),
      ...(load === 'orders' ? { flowsPerSecond: round2(pick((r) => r.flowsPerSecond)) } : {}),
      p99Ms: round3(pick((r) => r.p99Ms)),
      cpuUsPerRequest: round2(pick((r) => r.cpuUsPerRequest)),
      ...(engineId === 'pg' ? { backingCpuUsPerRequest: round2(pick((r) => r.backingCpuUsPerRequest)) } : {}),
      vmHwmMb: round2(pick((r) => r.vmHwmMb)),
      ratio: {
        rps: ratio(n, (r) => r.rps),
        p99Ms: ratio(n, (r) => r.p99Ms),
        cpuUsPerRequest: ratio(n, (r) => r.cpuUsPerRequest),
        vmHwmMb: ratio(n, (r) => r.vmHwmMb),
      },
      pendingAtEnd: pick((r) => r.metrics.pending),
      undispatchedAtEnd: pick((r) => r.metrics.undispatched),
      oldestPendingSeconds: pick((r) => r.metrics.oldestPendingSeconds),
      deliveriesTotal: Object.fromEntries([...outcomes].sort().map((o) => [o, pick((r) => r.metrics.deliveries[o] ?? 0)])),
      metricsScrapeMs: pick((r) => r.metrics.scrapeMs),
      blackHoleConnections: pick((r) => r.blackHole.sinceStart),
      drainAttemptsPerSecond: pick((r) => r.drain?.attemptsPerSecond),
      drainCpuUsPerAttempt: pick((r) => r.drain?.cpuUsPerAttempt),
      blackHoleOpenAtEnd: pick((r) => r.blackHole.openAtEnd),
      blackHoleDuringMeasurement: pick((r) => r.blackHole.duringMeasurement),
      databaseMb: pick((r) => r.databaseMb),
      httpErrors: rows.reduce((s, r) => s + r.httpErrors, 0),
      logWarnings: rows.reduce((s, r) => s + r.logWarnings.count, 0),
      otherCpuPctMax: Math.max(0, ...rows.map((r) => r.cpu.otherPct)),
    }
  })
}

const fmt = (x, digits = 0) =>
  x === null || x === undefined || Number.isNaN(x)
    ? '–'
    : Number(x).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const withRatio = (x, r, digits = 0) => `${fmt(x, digits)}${r === null || r === undefined ? '' : ` (${fmt(r, 2)})`}`

function markdown() {
  const lines = [
    LIVE
      ? '# What webhook endpoints that answer at once cost the write path'
      : '# What webhook endpoints that never answer cost the write path',
    '',
    `${results.startedAt.slice(0, 19).replace('T', ' ')} UTC, build ${results.dist.path} (built ${results.dist.builtAt}), ` +
      `${results.machine.cpus} CPUs, node ${results.machine.node}; server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}. ` +
      `Endpoints: every event type, each at ${LIVE ? `a receiver that answers 204 at once${TLS === undefined ? '' : ' (https)'}` : 'a black hole (accepts, never answers)'}, WEBHOOK_TIMEOUT_MS and WEBHOOK_CONCURRENCY at their defaults (10 s, 10). ` +
      `${ROUNDS} round(s) of ${DURATION} s after ${WARMUP} s of warm-up, a fresh server and database per run, counts interleaved per round (${COUNTS.join(',')}).`,
    '',
    `Medians over the valid runs; in parentheses the ratio to ${COUNTS[0]} endpoint(s), per round, median. ` +
      'CPU µs/req: the server’s utime+stime over the measured window ÷ its requests. Pending, undispatched and attempts: the server’s /metrics right after the window ' +
      '(attempts: `animal_store_webhook_deliveries_total` of that server since its start). Receiver conns: connections accepted since the server started (in parentheses those still open: attempts in flight, not yet counted).',
  ]
  for (const engine of Object.values(results.engines)) {
    lines.push('', `## ${engine.name}`, '')
    if (engine.status !== 'ok' && !engine.summary) {
      lines.push(`Not run: ${engine.reason ?? engine.status}`)
      continue
    }
    if (engine.reason) lines.push(`Stopped early: ${engine.reason}`, '')
    lines.push(
      '| Load | Endpoints | req/s | p99 ms | CPU µs/req | VmHWM MB | Pending at end | Undispatched | Attempts by outcome | Receiver conns (open) | DB MB | Valid runs |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
    )
    for (const [load, rows] of Object.entries(engine.summary ?? {})) {
      for (const s of rows) {
        const attempts = Object.entries(s.deliveriesTotal)
          .map(([o, v]) => `${o} ${fmt(v)}`)
          .join(', ')
        lines.push(
          `| ${LOAD_NAMES[load]} | ${s.endpoints} | ${withRatio(s.rps, s.ratio.rps)} | ${withRatio(s.p99Ms, s.ratio.p99Ms, 2)} | ` +
            `${withRatio(s.cpuUsPerRequest, s.ratio.cpuUsPerRequest, 1)} | ${withRatio(s.vmHwmMb, s.ratio.vmHwmMb, 1)} | ${fmt(s.pendingAtEnd)} | ` +
            `${fmt(s.undispatchedAtEnd)} | ${attempts || '–'} | ${fmt(s.blackHoleConnections)} (${fmt(s.blackHoleOpenAtEnd)}) | ${fmt(s.databaseMb, 1)} | ` +
            `${s.validRuns}/${s.runs}${s.fromVoidRuns ? ' (all void: figures from void runs)' : ''}${s.httpErrors ? `, ${s.httpErrors} HTTP errors` : ''} |`,
        )
      }
    }
  }
  if (LIVE && DRAIN > 0) {
    lines.push('', `After each run with endpoints, ${DRAIN} s with no request, the server delivering its backlog (median of the runs):`, '')
    lines.push('| Engine | Load before | Endpoints | Attempts a second | Server CPU µs per attempt |', '|---|---|---:|---:|---:|')
    for (const [engineId, engine] of Object.entries(results.engines))
      for (const [load, rows] of Object.entries(engine.summary ?? {}))
        for (const s of rows.filter((row) => row.endpoints > 0))
          lines.push(
            `| ${engineId} | ${LOAD_NAMES[load]} | ${s.endpoints} | ${fmt(s.drainAttemptsPerSecond)} | ${fmt(s.drainCpuUsPerAttempt)} |`,
          )
  }
  const voids = results.runs.filter((r) => r.void)
  if (voids.length) {
    const steal = voids.filter((r) => r.voidReason.startsWith('hypervisor steal'))
    lines.push(
      '',
      `${voids.length} of ${results.runs.length} runs void (limit ${options['void-threshold']}% of a core): ` +
        `${voids.length - steal.length} by other processes (largest ${Math.max(0, ...voids.map((r) => r.cpu.otherPct))}%), ` +
        `${steal.length} by hypervisor steal (largest ${Math.max(0, ...voids.map((r) => r.cpu.stealPct))}%).`,
    )
  }
  return `${lines.join('\n')}\n`
}

// ---------------------------------------------------------------------------------------------

const engineIds = ['sqlite', ...(options.pg ? ['pg'] : [])]
try {
  say(`${LIVE ? 'live receiver' : 'black hole'} on 127.0.0.1:${blackHole.port}; work dir ${work}; results to ${outDir}`)
  for (const engineId of engineIds) {
    const section = {
      name: engineId === 'pg' ? 'PostgreSQL + Redis limiter' : 'SQLite (embedded file) + in-memory limiter',
      status: 'not run',
    }
    results.engines[engineId] = section
    let engine
    try {
      engine = engineId === 'pg' ? await preparePg() : await prepareSqlite()
    } catch (error) {
      section.reason = `setup failed: ${error.message}`
      say(`${engineId}: ${section.reason}`)
      continue
    }
    section.name = engine.name
    section.setup = engine.setup
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        for (const load of LOADS) {
          for (const n of COUNTS) {
            for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
              const entry = await measureRun(engineId, engine, load, n, round, attempt)
              entry.final = !entry.void || attempt === MAX_RETRIES
              results.runs.push(entry)
              say(
                `${engineId} ${load} ${n} endpoint(s) round ${round}${attempt ? ` (rerun ${attempt})` : ''}: ${entry.rps} req/s, p99 ${entry.p99Ms} ms, ` +
                  `CPU ${entry.serverCpuPct}% = ${entry.cpuUsPerRequest} µs/req, VmHWM ${entry.vmHwmMb} MB, pending ${entry.metrics.pending}, ` +
                  `undispatched ${entry.metrics.undispatched}, attempts ${JSON.stringify(entry.metrics.deliveries)}, black hole ${entry.blackHole.sinceStart}` +
                  (entry.httpErrors ? `, ${entry.httpErrors} HTTP errors` : '') +
                  (entry.void ? ` VOID: ${entry.voidReason}` : ''),
              )
              if (entry.final) break
            }
          }
        }
      }
      section.status = 'ok'
    } catch (error) {
      section.status = 'failed'
      section.reason = `failed during the runs: ${error.message}`
      say(`${engineId}: ${section.reason}`)
    } finally {
      section.summary = Object.fromEntries(LOADS.map((load) => [load, summarise(engineId, load)]))
      await engine.dispose()
    }
  }
  const md = writeResults()
  process.stdout.write(md)
  process.stdout.write(`\nResults: ${files.json}, ${files.md}\n`)
} finally {
  await shutdown()
}

/** A self-signed certificate for 127.0.0.1 (P-256, a day), made with openssl in `dir`: the --tls receiver's. */
function selfSignedCertificate(dir) {
  const cert = join(dir, 'receiver-cert.pem')
  const key = join(dir, 'receiver-key.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  )
  return { cert, key }
}
