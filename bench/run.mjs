#!/usr/bin/env node
// Animal Store benchmark: the built service as a real process against a bare node:http "ceiling"
// that serves the very same bytes, under wrk, with CPU pinning and interference detection.
// See bench/README.md. Run: npm run build && node bench/run.mjs [--quick] [options]
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { request, wireSize } from '../tools/http.mjs'
import { findPids, kernelThreads, readMemory } from '../tools/proc.mjs'
import { CONFIG_VARS } from '../tools/service-env.mjs'
import { installGuards, onCleanup, shutdown, stop } from './lib/children.mjs'
import { measured, runFsyncBaseline, runPaced, runWrk, waitQuiet } from './lib/load.mjs'
import { summariseProfile } from './lib/profile.mjs'
import { computeTargets, markdownReport } from './lib/report.mjs'
import {
  childPids,
  createBenchKey,
  createPgDatabase,
  DIST,
  dropPgDatabase,
  growthQueries,
  ROOT,
  seedSqlite,
  startCeiling,
  startPeer,
  startService,
  withRestart,
} from './lib/service.mjs'

/** `A=1,B=2` -> { A: '1', B: '2' }; only the service's own configuration variables. */
function serviceEnvOption(raw) {
  if (raw === undefined || raw === '') return {}
  const env = {}
  for (const pair of raw.split(',')) {
    const [name, ...value] = pair.split('=')
    if (!CONFIG_VARS.includes(name) || value.length === 0)
      throw new Error(`--service-env: ${JSON.stringify(pair)} is not NAME=VALUE of a service setting`)
    env[name] = value.join('=')
  }
  return env
}

// ---------------------------------------------------------------------------------------------
// Options: flags, or BENCH_<NAME> environment variables (e.g. BENCH_ROUNDS=3); flags win.

const OPTIONS = {
  quick: {
    type: 'boolean',
    help: 'one short round of list20 + post on a small catalogue, a tiny growth check; no PG, durability, profile',
  },
  rounds: { type: 'string', help: 'measured rounds per scenario (default 5; quick 1)' },
  duration: { type: 'string', help: 'seconds per round, integer (default 10; quick 2)' },
  warmup: { type: 'string', help: 'warm-up seconds per server before the rounds, integer (default 5; quick 1)' },
  connections: { type: 'string', help: 'wrk keep-alive connections (default 50)' },
  catalogue: { type: 'string', help: 'pets in the catalogue of the main SQLite scenarios (default 10000; quick 1000)' },
  scenarios: { type: 'string', help: 'comma list of list20,list100,get,post (default all; quick list20,post)' },
  growth: {
    type: 'string',
    help: 'comma list of catalogue sizes for the growth check, or "none" (default 10000,100000,1000000; quick 2000)',
  },
  rate: { type: 'string', help: 'fixed request rate of the growth check, req/s (default 1000)' },
  'paced-duration': { type: 'string', help: 'seconds per growth measurement (default 10; quick 2)' },
  'distinct-pages': { type: 'string', help: 'distinct pages (after= values) per growth query, used round-robin (default 2000)' },
  pg: { type: 'boolean', help: 'run the PostgreSQL + Redis scenarios (default on; off with --quick)' },
  'no-pg': { type: 'boolean', help: 'skip PostgreSQL + Redis' },
  durability: { type: 'boolean', help: 'run the DURABILITY=power comparison (default on; off with --quick)' },
  'no-durability': { type: 'boolean', help: 'skip the durability comparison' },
  profile: { type: 'boolean', help: 'profile the service (node --cpu-prof) for one GET list round (default on; off with --quick)' },
  'no-profile': { type: 'boolean', help: 'skip the CPU profile' },
  'pg-url': { type: 'string', help: 'PostgreSQL server to create the bench database on (default postgres://postgres@127.0.0.1:5432/test)' },
  'pg-database': {
    type: 'string',
    help: 'name of the database created (dropped first) and dropped for the PG+Redis scenarios (default animal_store_bench_<pid>)',
  },
  'redis-url': { type: 'string', help: 'Redis for the PG+Redis scenarios (default redis://127.0.0.1:6379)' },
  'void-threshold': { type: 'string', help: 'CPU used by other processes, % of one core, above which a round is void (default 3)' },
  'max-retries': { type: 'string', help: 'reruns of a void round before giving up on it (default 3; quick 0)' },
  'quiet-wait': {
    type: 'string',
    help: 'max seconds to wait for a quiet machine (2 quiet 1 s windows) before each round (default 120; quick 2)',
  },
  cluster: {
    type: 'boolean',
    help: 'run `serve --workers N` with the Redis limiter for each of --workers, to measure scaling (default on; off with --quick)',
  },
  'no-cluster': { type: 'boolean', help: 'skip the cluster scaling section' },
  peers: {
    type: 'boolean',
    help: 'run the peers in the same rounds on list20 and post: bare Fastify (SQLite), a minimal Fastify+pg+ioredis service (PG+Redis) (default on, also with --quick)',
  },
  'no-peers': { type: 'boolean', help: 'skip the peers' },
  workers: { type: 'string', help: 'comma list of worker counts for the cluster section (default 1,2)' },
  only: { type: 'string', help: 'comma list of sections to run: main,profile,growth,durability,pg,cluster (default all)' },
  out: { type: 'string', help: 'directory for <date>.json and <date>.md (default bench/results)' },
  'max-minutes': { type: 'string', help: 'hard deadline for the whole run; partial results are written (default 90)' },
  'keep-tmp': { type: 'boolean', help: 'keep the temp dir (databases, logs, profile)' },
  'service-env': {
    type: 'string',
    help: 'comma list NAME=VALUE of service settings for every service started (e.g. LIMITER_STATE_FILE=off, to measure what a feature costs)',
  },
  help: { type: 'boolean', short: 'h' },
}

/** Interpolated (quoted) into CREATE/DROP DATABASE and matched in `ps` output: plain identifiers only. */
function pgDatabaseOption(raw) {
  // By default the run's own: two runs at once (a worktree's and main's) must not drop each other's database.
  const name = raw ?? `animal_store_bench_${process.pid}`
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`--pg-database must be a plain lower-case identifier (got ${raw})`)
  return name
}

function parseOptions() {
  const { values } = parseArgs({
    options: Object.fromEntries(Object.entries(OPTIONS).map(([k, v]) => [k, { type: v.type, ...(v.short ? { short: v.short } : {}) }])),
  })
  if (values.help) {
    process.stdout.write('Usage: node bench/run.mjs [options]   (build first: npm run build)\n\n')
    for (const [k, v] of Object.entries(OPTIONS)) if (v.help) process.stdout.write(`  --${k.padEnd(16)} ${v.help}\n`)
    process.stdout.write('\nEvery option can also be given as BENCH_<NAME> (e.g. BENCH_ROUNDS=3, BENCH_QUICK=1, BENCH_NO_PG=1).\n')
    process.exit(0)
  }
  const env = (name) => process.env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`]
  const get = (name) => values[name] ?? env(name)
  const flag = (name) => {
    const v = get(name)
    return v === true || v === '1' || v === 'true'
  }
  const quick = flag('quick')
  const num = (name, full, q, { integer = true, min = 0 } = {}) => {
    const raw = get(name)
    const n = raw === undefined ? (quick ? q : full) : Number(raw)
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} >= ${min} (got ${raw})`)
    }
    return n
  }
  const onOff = (name) => (flag(`no-${name}`) ? false : get(name) !== undefined ? flag(name) : !quick)
  const list = (name, full, q) => {
    const raw = get(name) ?? (quick ? q : full)
    return raw === 'none' || raw === ''
      ? []
      : String(raw)
          .split(',')
          .map((s) => s.trim())
  }
  const scenarios = list('scenarios', 'list20,list100,get,post', 'list20,post')
  for (const s of scenarios)
    if (!SQLITE_SCENARIOS[s]) throw new Error(`unknown scenario ${s} (known: ${Object.keys(SQLITE_SCENARIOS).join(', ')})`)
  const growth = list('growth', '10000,100000,1000000', '2000').map(Number)
  if (growth.some((n) => !Number.isInteger(n) || n < 200)) throw new Error('--growth sizes must be integers >= 200')
  const only = list('only', 'main,profile,growth,durability,pg,cluster', 'main,profile,growth,durability,pg,cluster')
  for (const s of only)
    if (!['main', 'profile', 'growth', 'durability', 'pg', 'cluster'].includes(s)) throw new Error(`unknown section ${s} in --only`)
  const workers = list('workers', '1,2', '1,2').map(Number)
  if (workers.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) throw new Error('--workers must be integers from 1 to 64')
  return {
    quick,
    only,
    rounds: num('rounds', 5, 1, { min: 1 }),
    duration: num('duration', 10, 2, { min: 1 }),
    warmup: num('warmup', 5, 1),
    connections: num('connections', 50, 50, { min: 1 }),
    catalogue: num('catalogue', 10_000, 1000, { min: 200 }),
    scenarios,
    growth,
    rate: num('rate', 1000, 1000, { min: 1 }),
    pacedDuration: num('paced-duration', 10, 2, { min: 1 }),
    distinctPages: num('distinct-pages', 2000, 2000, { min: 1 }),
    pg: onOff('pg'),
    cluster: onOff('cluster'),
    // Cheap enough for --quick too (two short scenarios), so the smoke run exercises them.
    peers: flag('no-peers') ? false : get('peers') !== undefined ? flag('peers') : true,
    workers,
    durability: onOff('durability'),
    profile: onOff('profile'),
    pgUrl: get('pg-url') ?? 'postgres://postgres@127.0.0.1:5432/test',
    pgDatabase: pgDatabaseOption(get('pg-database')),
    redisUrl: get('redis-url') ?? 'redis://127.0.0.1:6379',
    voidThreshold: num('void-threshold', 3, 3, { integer: false }),
    maxRetries: num('max-retries', 3, 0),
    quietWait: num('quiet-wait', 120, 2),
    out: resolve(get('out') ?? join(ROOT, 'bench/results')),
    maxMinutes: num('max-minutes', 90, 10, { integer: false, min: 1 }),
    keepTmp: flag('keep-tmp'),
    serviceEnv: serviceEnvOption(get('service-env')),
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

const POST_BODY = '{"name":"rex","categoryId":1,"status":"available"}'
const SQLITE_SCENARIOS = {
  list20: { name: 'GET /v1/pets?limit=20', method: 'GET', path: () => '/v1/pets?limit=20', expect: 200 },
  list100: {
    name: 'GET /v1/pets?limit=100&status=available',
    method: 'GET',
    path: () => '/v1/pets?limit=100&status=available',
    expect: 200,
  },
  get: { name: 'GET /v1/pets/{id} (deprecated)', method: 'GET', path: (ctx) => `/v1/pets/${ctx.getId}`, expect: 200 },
  post: { name: 'POST /v1/pets', method: 'POST', path: () => '/v1/pets', body: POST_BODY, expect: 201 },
}
const PG_SCENARIOS = ['list20', 'post']
/** The scenarios the peers answer (bench/peers/): the issue's goals are set on these two. */
const PEER_SCENARIOS = ['list20', 'post']

/** What each peer is (recorded in the results; docs/performance.md says why they are the fair comparison). */
const PEERS = {
  'bare-fastify': {
    backend: 'sqlite',
    script: 'bench/peers/bare-fastify.mjs',
    does: "Fastify 5, no logger, one async handler per captured route answering the service's captured status, headers and body (precomputed); reads the POST body with Fastify's JSON parser",
    doesNot: 'auth, rate limits, computing headers, validation, storage, access log, metrics',
  },
  'pg-redis': {
    backend: 'pg',
    script: 'bench/peers/pg-redis-peer.mjs',
    does: 'Fastify 5 with JSON schemas, no logger; Bearer key checked by SHA-256 against one key known at start; one Redis EVALSHA per request (INCR + EXPIRE of a per-minute window key, ioredis auto-pipelining); keyset SELECT ... WHERE id > $1 ORDER BY id LIMIT $2 (limit + 1, Link header) or INSERT ... RETURNING with pg (pool of 10, unnamed statements) on the same tables',
    doesNot:
      "second (daily) window, bans, rate-limit headers, key cache invalidation, usage history, access log, metrics, idempotency, int64 beyond 2^53, strict validation (Fastify's default Ajv: coercion, defaults)",
  },
}

const SERVER_CPU = 1
const LOAD_CPU = 0

// ---------------------------------------------------------------------------------------------

const opts = parseOptions()
const log = (msg) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`)
const median = (xs) => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const round2 = (x) => (x === null || x === undefined ? null : Math.round(x * 100) / 100)
const round3 = (x) => (x === null || x === undefined ? null : Math.round(x * 1000) / 1000)

// Filled in as the run goes; on an abort (deadline, Ctrl-C, error) what was measured is still written.
let results = null
let written = false
installGuards(opts.maxMinutes * 60_000, async (why) => {
  if (results && !written) {
    results.aborted = why
    writeResults(results)
  }
})
const tmp = mkdtempSync(join(os.tmpdir(), 'animal-store-bench-'))
onCleanup(() => {
  if (opts.keepTmp) log(`temp dir kept: ${tmp}`)
  else rmSync(tmp, { recursive: true, force: true })
})

function preflight() {
  const problems = []
  if (!existsSync(join(DIST, 'server.js'))) problems.push('dist/server.js is missing: run `npm run build` first')
  if (!existsSync(join(DIST, 'storage/sqlite/migrations')))
    problems.push('dist/storage/sqlite/migrations is missing: run `npm run build` (it copies the SQL migrations)')
  if (spawnSync('wrk', ['-v']).error) problems.push('wrk is not installed: apt-get install -y wrk')
  if (spawnSync('taskset', ['-V']).error) problems.push('taskset is not installed (util-linux)')
  if (os.cpus().length < 2) problems.push('needs at least 2 CPUs (server on CPU 1, load on CPU 0)')
  if (problems.length) {
    process.stderr.write(`bench: cannot run:\n  - ${problems.join('\n  - ')}\n`)
    process.exit(2)
  }
}

function machineInfo() {
  const wrkOut = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  const cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model
  const sh = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    } catch {
      return null
    }
  }
  const df = sh('df', ['-T', tmp])?.split('\n')[1]?.split(/\s+/)
  return {
    node: process.version,
    cpuModel,
    cpus: os.cpus().length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    kernel: `${os.type()} ${os.release()}`,
    wrk: ((wrkOut.stdout || '') + (wrkOut.stderr || ''))
      .split('\n')[0]
      .replace(/\s*Copyright.*$/, '')
      .trim(),
    tmpFilesystem: df ? { device: df[0], type: df[1] } : null,
    gitCommit: sh('git', ['rev-parse', '--short', 'HEAD']),
    gitDirty: (sh('git', ['status', '--porcelain', '--', 'src']) ?? '') !== '',
  }
}

// Processes that belong to the benchmark during a window, beyond this process and its reaped children:
// the kernel threads, which do the kernel's deferred share of our own load (see proc.mjs).
function harnessGroups(extra = {}) {
  return { kernel: kernelThreads, ...extra }
}

async function quiet(groups) {
  return waitQuiet({
    groups,
    thresholdPct: opts.voidThreshold,
    windowMs: opts.quick ? 500 : 1000,
    maxWaitMs: opts.quietWait * 1000,
    onWait: (pct, s) =>
      log(`waiting for a quiet machine (other processes use ${pct}% of a core; ${s}s so far, at most ${opts.quietWait}s)`),
  })
}

// ---------------------------------------------------------------------------------------------
// Capturing the service's responses for the ceiling

async function capture(port, key, sc, ctx) {
  const path = sc.path(ctx)
  const headers = { authorization: `Bearer ${key}` }
  if (sc.body) headers['content-type'] = 'application/json'
  const r = await request(port, { method: sc.method, path, headers, body: sc.body, redirect: 'manual' })
  if (r.status !== sc.expect) throw new Error(`${sc.method} ${path}: expected ${sc.expect}, got ${r.status}: ${r.text.slice(0, 300)}`)
  return { method: sc.method, path, status: r.status, headers: r.rawHeaders, bodyBase64: r.bytes.toString('base64'), raw: r }
}

/** Checks that the ceiling answers each path with the same status, header names and size. */
async function compareWithCeiling(ceilingPort, key, sc, ctx, captured) {
  const c = await capture(ceilingPort, key, sc, ctx)
  const names = (h) =>
    h
      .map(([k]) => k.toLowerCase())
      .filter((k) => k !== 'date')
      .join(',')
  return {
    serviceBytes: wireSize(captured.raw),
    ceilingBytes: wireSize(c.raw),
    sameHeaders: names(captured.headers) === names(c.headers),
    sameBody: captured.bodyBase64 === c.bodyBase64,
  }
}

// ---------------------------------------------------------------------------------------------
// One scenario: warm-up, then interleaved rounds ceiling/peer/service, void rounds rerun

/** CPU time of the processes of `labels` in a measured run, per request, in µs (null without requests). */
function cpuUsPerRequest(m, ...labels) {
  if (!m.requests) return null
  const pct = labels.reduce((sum, label) => sum + (m.cpu.groupsPct[label] ?? 0), 0)
  return round2(((pct / 100) * m.cpu.seconds * 1e6) / m.requests)
}

/** Throws if a peer is gone: its rounds would only count socket errors. */
function assertPeerAlive(peer) {
  if (peer.child.exitCode !== null || peer.child.signalCode !== null) {
    const last = (peer.child.err || peer.child.out).trim().split('\n').slice(-5).join(' | ')
    throw new Error(`the ${peer.kind} peer exited (${peer.child.signalCode ?? `code ${peer.child.exitCode}`}): ${last || 'no output'}`)
  }
}

/**
 * Warm-up, then `--rounds` rounds of ceiling, peer (when given) and service — one after the other
 * under the same wrk settings, so the ratios are paired per round — void rounds rerun together.
 */
async function runScenario({ id, sc, backend, ctx, service, ceiling, peer, key, extraGroups = {} }) {
  const path = sc.path(ctx)
  const groups = harnessGroups({
    server: () => [service.pid],
    ceiling: () => [ceiling.pid],
    ...(peer ? { peer: () => [peer.pid] } : {}),
    ...extraGroups,
  })
  // PostgreSQL and Redis: what each side costs them per request.
  const backing = Object.keys(extraGroups)
  const load = (port, seconds) =>
    runWrk({ port, path, method: sc.method, body: sc.body, key, seconds, connections: opts.connections, cpu: LOAD_CPU })
  log(`${backend} ${sc.name}: warm-up ${opts.warmup}s per server`)
  if (opts.warmup > 0) {
    await load(ceiling.port, opts.warmup)
    if (peer) await load(peer.port, opts.warmup)
    await load(service.port, opts.warmup)
  }
  const rounds = []
  for (let r = 1; r <= opts.rounds; r++) {
    for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
      const waited = await quiet(groups)
      const { c, p, s } = await withRestart(
        service,
        async () => {
          const c = await measured({ groups, thresholdPct: opts.voidThreshold }, () => load(ceiling.port, opts.duration))
          const runPeer = () =>
            measured({ groups, memoryPid: peer.pid, thresholdPct: opts.voidThreshold }, () => load(peer.port, opts.duration))
          const runService = () =>
            measured({ groups, memoryPid: service.pid, thresholdPct: opts.voidThreshold }, () => load(service.port, opts.duration))
          // Peer and service swap places every other round, so neither always follows the other
          // (a POST round leaves the table larger and PostgreSQL with work for the next one).
          if (!peer) return { c, p: null, s: await runService() }
          if (r % 2 === 1) {
            const p = await runPeer()
            return { c, p, s: await runService() }
          }
          const s = await runService()
          return { c, p: await runPeer(), s }
        },
        2,
        log,
        async () => opts.warmup > 0 && (await load(service.port, opts.warmup)),
      )
      if (peer) assertPeerAlive(peer)
      s.serverCpuPct = s.cpu.groupsPct.server
      s.cpuUsPerRequest = cpuUsPerRequest(s, 'server')
      c.serverCpuPct = c.cpu.groupsPct.ceiling
      c.cpuUsPerRequest = cpuUsPerRequest(c, 'ceiling')
      if (backing.length) s.backingCpuUsPerRequest = cpuUsPerRequest(s, ...backing)
      if (p) {
        p.serverCpuPct = p.cpu.groupsPct.peer
        p.cpuUsPerRequest = cpuUsPerRequest(p, 'peer')
        if (backing.length) p.backingCpuUsPerRequest = cpuUsPerRequest(p, ...backing)
      }
      const voidReason = c.voidReason
        ? `ceiling run: ${c.voidReason}`
        : p?.voidReason
          ? `peer run: ${p.voidReason}`
          : s.voidReason
            ? `service run: ${s.voidReason}`
            : null
      const entry = {
        round: r,
        attempt,
        quietWait: waited,
        ceiling: c,
        ...(p ? { peer: p, order: r % 2 === 1 ? 'ceiling, peer, service' : 'ceiling, service, peer' } : {}),
        service: s,
        ratio: round3(s.rps / c.rps),
        ...(p ? { peerRatio: round3(s.rps / p.rps) } : {}),
        void: voidReason !== null,
        voidReason,
      }
      rounds.push(entry)
      log(
        `${backend} ${id} round ${r}${attempt ? ` (rerun ${attempt})` : ''}: ceiling ${c.rps} rps, ` +
          (p ? `${peer.kind} peer ${p.rps} rps (${p.cpuUsPerRequest} µs CPU/req), ` : '') +
          `service ${s.rps} rps (ratio ${entry.ratio}${p ? `, to peer ${entry.peerRatio}` : ''}, p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, ` +
          `server CPU ${s.serverCpuPct}% = ${s.cpuUsPerRequest} µs/req, RSS ${s.memory.peakRssMb} MB)` +
          (voidReason ? ` VOID: ${voidReason}` : ''),
      )
      if (!voidReason) break
    }
  }
  return {
    id,
    name: sc.name,
    backend,
    method: sc.method,
    path,
    connections: opts.connections,
    seconds: opts.duration,
    ...(peer ? { peer: peer.kind } : {}),
    rounds,
    summary: summarise(rounds, sc),
  }
}

function summarise(rounds, sc, { includeVoid = false } = {}) {
  const valid = includeVoid ? rounds : rounds.filter((r) => !r.void)
  const roundsById = new Map()
  for (const r of rounds) roundsById.set(r.round, r)
  const pick = (f) => median(valid.map(f))
  const spread = (xs) => ({ median: round3(median(xs)), min: xs.length ? Math.min(...xs) : null, max: xs.length ? Math.max(...xs) : null })
  const expectErrors = rounds.reduce((n, r) => n + r.service.errorStatus + r.service.socketErrors, 0)
  const withPeer = rounds.some((r) => r.peer)
  return {
    validRounds: valid.length,
    roundsAsked: roundsById.size,
    voidRuns: rounds.length - valid.length,
    rps: round2(pick((r) => r.service.rps)),
    ceilingRps: round2(pick((r) => r.ceiling.rps)),
    ratio: spread(valid.map((r) => r.ratio)),
    p50Ms: round3(pick((r) => r.service.p50Ms)),
    p99Ms: round3(pick((r) => r.service.p99Ms)),
    ceilingP50Ms: round3(pick((r) => r.ceiling.p50Ms)),
    ceilingP99Ms: round3(pick((r) => r.ceiling.p99Ms)),
    peakRssMb: Math.max(0, ...rounds.map((r) => r.service.memory?.peakRssMb ?? 0)),
    vmHwmMb: Math.max(0, ...rounds.map((r) => r.service.memory?.hwmMb ?? 0)),
    serverCpuPct: round2(pick((r) => r.service.serverCpuPct)),
    ceilingCpuPct: round2(pick((r) => r.ceiling.serverCpuPct)),
    cpuUsPerRequest: round2(pick((r) => r.service.cpuUsPerRequest)),
    ceilingCpuUsPerRequest: round2(pick((r) => r.ceiling.cpuUsPerRequest)),
    ...(rounds.some((r) => r.service.backingCpuUsPerRequest !== undefined)
      ? { backingCpuUsPerRequest: round2(pick((r) => r.service.backingCpuUsPerRequest)) }
      : {}),
    otherCpuPctMax: Math.max(0, ...rounds.map((r) => Math.max(r.service.cpu.otherPct, r.ceiling.cpu.otherPct, r.peer?.cpu.otherPct ?? 0))),
    httpErrors: expectErrors,
    expectedStatus: sc.expect,
    ...(withPeer
      ? {
          // Service ÷ peer of the same round, median over valid rounds: a slow or fast moment of the
          // machine moves both sides of a pair, not the ratio.
          peer: {
            rps: round2(pick((r) => r.peer.rps)),
            ratio: spread(valid.map((r) => r.peerRatio)),
            p50Ms: round3(pick((r) => r.peer.p50Ms)),
            p99Ms: round3(pick((r) => r.peer.p99Ms)),
            cpuPct: round2(pick((r) => r.peer.serverCpuPct)),
            cpuUsPerRequest: round2(pick((r) => r.peer.cpuUsPerRequest)),
            ...(rounds.some((r) => r.peer.backingCpuUsPerRequest !== undefined)
              ? { backingCpuUsPerRequest: round2(pick((r) => r.peer.backingCpuUsPerRequest)) }
              : {}),
            peakRssMb: Math.max(0, ...rounds.map((r) => r.peer.memory?.peakRssMb ?? 0)),
            vmHwmMb: Math.max(0, ...rounds.map((r) => r.peer.memory?.hwmMb ?? 0)),
            httpErrors: rounds.reduce((n, r) => n + r.peer.errorStatus + r.peer.socketErrors, 0),
          },
        }
      : {}),
    // Without a single valid round, the same figures over the void rounds, for orientation only.
    ...(valid.length === 0 && !includeVoid && rounds.length ? { voidRoundsOnly: summarise(rounds, sc, { includeVoid: true }) } : {}),
  }
}

async function captureAndStartCeiling({ service, key, ids, ctx }) {
  const captured = []
  for (const id of ids) captured.push(await capture(service.port, key, SQLITE_SCENARIOS[id], ctx))
  const captures = captured.map(({ raw, ...c }) => c)
  const ceiling = await startCeiling(captures, tmp, SERVER_CPU)
  const wire = {}
  for (const [i, id] of ids.entries()) {
    wire[id] = await compareWithCeiling(ceiling.port, key, SQLITE_SCENARIOS[id], ctx, captured[i])
    if (!wire[id].sameHeaders || !wire[id].sameBody || Math.abs(wire[id].serviceBytes - wire[id].ceilingBytes) > 2) {
      log(`WARNING: ceiling response for ${id} differs from the service's: ${JSON.stringify(wire[id])}`)
    }
  }
  return { ceiling, wire, captured, captures }
}

/**
 * Starts the peer of a backend (see bench/peers/) and checks its answers against the service's
 * captured ones: a GET must be the same body byte for byte (both read the same rows); a create the
 * same fields in the same order (its id is another one). Headers may differ for the PG+Redis peer.
 */
/**
 * The peer of a section, checked (recorded in `section.peer`); if it does not start or does not
 * answer as the service does, that is recorded and the section runs without it.
 */
async function peerOrNothing(section, args) {
  const { script } = PEERS[args.kind]
  try {
    const { peer, wire } = await startCheckedPeer(args)
    section.peer = { kind: args.kind, script, status: 'ok', scenarios: args.ids, wire }
    return peer
  } catch (error) {
    section.peer = { kind: args.kind, script, status: 'failed', reason: error.message }
    log(`${args.kind} peer: FAILED, the scenarios run without it: ${error.message}`)
    return undefined
  }
}

async function startCheckedPeer({ kind, key, ids, ctx, captured, captures, databaseUrl }) {
  const peer = await startPeer({ kind, cpu: SERVER_CPU, dir: tmp, captures, databaseUrl, redisUrl: opts.redisUrl, key })
  const wire = {}
  try {
    for (const [i, id] of ids.entries()) {
      const sc = SQLITE_SCENARIOS[id]
      const p = await capture(peer.port, key, sc, ctx)
      const fields = (b64) => {
        try {
          return JSON.stringify(Object.keys(JSON.parse(Buffer.from(b64, 'base64').toString())))
        } catch {
          return null
        }
      }
      const names = (h) => h.map(([k]) => k.toLowerCase()).filter((k) => !['date', 'connection', 'keep-alive'].includes(k))
      wire[id] = {
        peerBytes: wireSize(p.raw),
        peerBodyBytes: p.raw.bytes.length,
        serviceBodyBytes: captured[i].raw.bytes.length,
        sameBody: p.bodyBase64 === captured[i].bodyBase64,
        sameFields: fields(p.bodyBase64) === fields(captured[i].bodyBase64),
        sameHeaders: JSON.stringify(names(p.headers).sort()) === JSON.stringify(names(captured[i].headers).sort()),
      }
      if (sc.method === 'GET' ? !wire[id].sameBody : !wire[id].sameFields)
        throw new Error(`the ${kind} peer's answer to ${sc.method} ${p.path} is not the service's: ${JSON.stringify(wire[id])}`)
    }
  } catch (error) {
    await stop(peer.child)
    throw error
  }
  return { peer, wire }
}

// ---------------------------------------------------------------------------------------------
// Sections

async function sqliteSection(results) {
  const dbFile = join(tmp, 'main.db')
  const key = await createBenchKey(dbFile)
  results.keyCreatedVia = key.via
  const seed = await seedSqlite(dbFile, opts.catalogue)
  log(`SQLite: catalogue of ${seed.rows} pets seeded directly in ${seed.seconds}s; key via ${key.via}`)
  const service = await startService({
    env: opts.serviceEnv,
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
    const { ceiling, wire, captured, captures } = await captureAndStartCeiling({ service, key: key.key, ids, ctx })
    let peer
    try {
      const peerIds = opts.peers ? ids.filter((id) => PEER_SCENARIOS.includes(id)) : []
      if (peerIds.length) {
        peer = await peerOrNothing(section, {
          kind: 'bare-fastify',
          key: key.key,
          ids: peerIds,
          ctx,
          captured: peerIds.map((id) => captured[ids.indexOf(id)]),
          captures,
        })
      }
      for (const id of ids) {
        const withPeer = peer && PEER_SCENARIOS.includes(id) ? peer : undefined
        const r = await runScenario({
          id,
          sc: SQLITE_SCENARIOS[id],
          backend: 'sqlite',
          ctx,
          service,
          ceiling,
          peer: withPeer,
          key: key.key,
        })
        r.wire = { ...wire[id], ...(withPeer ? { peer: section.peer.wire[id] } : {}) }
        section.scenarios.push(r)
      }
    } finally {
      await stop(ceiling.child)
      if (peer) await stop(peer.child)
    }
  } finally {
    await stop(service.child)
  }
  return { dbFile, key: key.key }
}

async function freshCatalogue(name) {
  const dbFile = join(tmp, `${name}.db`)
  const key = await createBenchKey(dbFile)
  await seedSqlite(dbFile, opts.catalogue)
  return { dbFile, key: key.key }
}

async function profileSection(results, { dbFile, key }) {
  const dir = join(tmp, 'cpu-profile')
  mkdirSync(dir, { recursive: true })
  const service = await startService({
    env: opts.serviceEnv,
    databaseUrl: dbFile,
    logFile: join(tmp, 'service-profile.log'),
    cpu: SERVER_CPU,
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--trace-gc'],
  })
  let run
  let fromUs
  let toUs
  // --trace-gc lines (on the service's stdout) seen during the measured round.
  const gc = { collecting: false, events: [] }
  let partial = ''
  service.child.stdout.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()
    if (!gc.collecting) return
    for (const line of lines) {
      const m = /ms: ([A-Za-z-]+(?: \([a-z]+\))?) ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \/ ([\d.]+) ms/.exec(line)
      if (m) gc.events.push({ kind: m[1], beforeMb: Number(m[2]), afterMb: Number(m[3]), pauseMs: Number(m[4]) })
    }
  })
  try {
    const sc = SQLITE_SCENARIOS.list20
    log(`profile: node --cpu-prof, ${sc.name}, warm-up ${Math.max(1, opts.warmup)}s + one ${opts.duration}s round`)
    await runWrk({
      port: service.port,
      path: sc.path(),
      key,
      seconds: Math.max(1, opts.warmup),
      connections: opts.connections,
      cpu: LOAD_CPU,
    })
    fromUs = Number(process.hrtime.bigint() / 1000n)
    gc.collecting = true
    run = await runWrk({ port: service.port, path: sc.path(), key, seconds: opts.duration, connections: opts.connections, cpu: LOAD_CPU })
    gc.collecting = false
    toUs = Number(process.hrtime.bigint() / 1000n)
  } finally {
    await stop(service.child) // SIGTERM: graceful close; V8 writes the profile on exit
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
  if (!file) {
    results.profile = { status: 'not run', reason: 'no .cpuprofile was written (did the service exit on SIGTERM?)' }
    return
  }
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
  const summary = summariseProfile(profile, { root: ROOT, fromUs, toUs })
  const scavenges = gc.events.filter((e) => e.kind.startsWith('Scavenge'))
  const pauses = gc.events.map((e) => e.pauseMs)
  const roundMs = (toUs - fromUs) / 1000
  const gcSummary = {
    events: gc.events.length,
    scavenges: scavenges.length,
    markCompacts: gc.events.filter((e) => e.kind.includes('Mark')).length,
    pauseMsTotal: round2(pauses.reduce((a, b) => a + b, 0)),
    pauseMsMax: pauses.length ? Math.max(...pauses) : 0,
    pausePctOfRound: round2((pauses.reduce((a, b) => a + b, 0) / roundMs) * 100),
    // Young-generation garbage per request: what the scavenges freed over the round / requests.
    scavengedKbPerRequest: run.requests ? round2((scavenges.reduce((a, e) => a + e.beforeMb - e.afterMb, 0) * 1024) / run.requests) : null,
  }
  results.profile = {
    status: 'ok',
    scenario: 'list20',
    rpsUnderProfiler: run.rps,
    p99MsUnderProfiler: run.p99Ms,
    gc: gcSummary,
    ...summary,
  }
  if (opts.keepTmp) results.profile.file = join(dir, file)
}

async function growthSection(results) {
  const dbFile = join(tmp, 'growth.db')
  const key = await createBenchKey(dbFile)
  const section = {
    rate: opts.rate,
    seconds: opts.pacedDuration,
    generator: 'bench/paced.mjs (open loop, keep-alive http.Agent, CPU 0)',
    sizes: [],
  }
  results.growth = section
  for (const size of opts.growth) {
    const seed = await seedSqlite(dbFile, size)
    log(`growth: ${seed.rows} pets (inserted ${seed.inserted} directly in ${seed.seconds}s)`)
    const queries = await growthQueries(dbFile, { quick: opts.quick, distinct: opts.distinctPages })
    const service = await startService({
      env: opts.serviceEnv,
      databaseUrl: dbFile,
      logFile: join(tmp, `service-growth-${size}.log`),
      cpu: SERVER_CPU,
    })
    const groups = harnessGroups({ server: () => [service.pid] })
    const entry = { size: seed.rows, seedSeconds: seed.seconds, queries: [] }
    section.sizes.push(entry)
    try {
      // Once: the same paced load on the ceiling (same response bytes, any page) = the floor this
      // machine and this generator give at that rate, to read the service's latencies against.
      if (!section.floor) section.floor = await growthFloor({ service, key: key.key, queries, size })
      for (const q of queries) {
        const check = await request(service.port, { path: q.paths[0], headers: { authorization: `Bearer ${key.key}` } })
        const items = check.status === 200 ? JSON.parse(check.text).length : 0
        if (check.status !== 200 || items === 0) throw new Error(`growth query ${q.paths[0]} answered ${check.status} with ${items} items`)
        const pathsFile = join(tmp, `paths-${size}-${q.id}.txt`)
        writeFileSync(pathsFile, q.paths.join('\n') + '\n')
        const runs = []
        for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
          const waited = await quiet(groups)
          const m = await withRestart(
            service,
            () =>
              measured({ groups, memoryPid: service.pid, thresholdPct: opts.voidThreshold }, () =>
                runPaced({
                  port: service.port,
                  path: q.paths[0],
                  pathsFile,
                  key: key.key,
                  rate: opts.rate,
                  seconds: opts.pacedDuration,
                  warmup: opts.quick ? 1 : 2,
                  cpu: LOAD_CPU,
                }),
              ),
            2,
            log,
            () =>
              runPaced({
                port: service.port,
                path: q.paths[0],
                pathsFile,
                key: key.key,
                rate: opts.rate,
                seconds: 2,
                warmup: 0,
                cpu: LOAD_CPU,
              }),
          )
          m.serverCpuPct = m.cpu.groupsPct.server
          runs.push({ attempt, quietWait: waited, ...m, void: m.voidReason !== null })
          log(
            `growth ${seed.rows} ${q.id}: ${m.achievedRate}/s p50 ${m.p50Ms} ms p99 ${m.p99Ms} ms (schedule p99 ${m.scheduleP99Ms} ms), ` +
              `server CPU ${m.serverCpuPct}%${m.voidReason ? ` VOID: ${m.voidReason}` : ''}`,
          )
          if (!m.voidReason) break
        }
        const valid = runs.filter((r) => !r.void)
        const best = valid[valid.length - 1]
        entry.queries.push({
          id: q.id,
          path: q.pattern,
          distinctPaths: q.paths.length,
          items,
          plan: q.plan,
          runs,
          valid: best !== undefined,
          p50Ms: best?.p50Ms ?? null,
          p99Ms: best?.p99Ms ?? null,
          serverCpuPct: best?.serverCpuPct ?? null,
          ...(best ? {} : { voidP50Ms: runs[runs.length - 1].p50Ms, voidP99Ms: runs[runs.length - 1].p99Ms }),
          peakRssMb: Math.max(0, ...runs.map((r) => r.memory?.peakRssMb ?? 0)),
        })
      }
      // The service's largest resident set at this size: sampled during the measured runs, and
      // the kernel's own high-water mark over the process's life (start-up and warm-up included).
      entry.peakRssMb = Math.max(0, ...entry.queries.map((q) => q.peakRssMb))
      const hwm = readMemory(service.pid)?.hwmKb
      entry.vmHwmMb = hwm ? Math.round(hwm / 102.4) / 10 : null
      log(`growth ${seed.rows}: peak RSS ${entry.peakRssMb} MB (VmHWM ${entry.vmHwmMb} MB)`)
    } finally {
      await stop(service.child)
    }
  }
  // Largest size against the smallest, per query.
  const first = section.sizes[0]
  const last = section.sizes[section.sizes.length - 1]
  section.ratios =
    first && last && first !== last
      ? first.queries.map((q, i) => ({
          id: q.id,
          from: first.size,
          to: last.size,
          p50: q.p50Ms && last.queries[i]?.p50Ms ? round2(last.queries[i].p50Ms / q.p50Ms) : null,
          p99: q.p99Ms && last.queries[i]?.p99Ms ? round2(last.queries[i].p99Ms / q.p99Ms) : null,
        }))
      : []
}

async function growthFloor({ service, key, queries, size }) {
  const captures = []
  for (const q of queries) {
    const r = await request(service.port, { path: q.paths[0], headers: { authorization: `Bearer ${key}` }, redirect: 'manual' })
    captures.push({
      method: 'GET',
      path: q.paths[0],
      status: r.status,
      headers: r.rawHeaders,
      bodyBase64: r.bytes.toString('base64'),
      anyQuery: true,
    })
  }
  const ceiling = await startCeiling(captures, tmp, SERVER_CPU)
  const groups = harnessGroups({ server: () => [service.pid], ceiling: () => [ceiling.pid] })
  const floor = {}
  try {
    for (const q of queries) {
      const pathsFile = join(tmp, `paths-floor-${size}-${q.id}.txt`)
      writeFileSync(pathsFile, q.paths.join('\n') + '\n')
      let last
      for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
        await quiet(groups)
        last = await measured({ groups, thresholdPct: opts.voidThreshold }, () =>
          runPaced({
            port: ceiling.port,
            path: q.paths[0],
            pathsFile,
            key,
            rate: opts.rate,
            seconds: opts.pacedDuration,
            warmup: opts.quick ? 1 : 2,
            cpu: LOAD_CPU,
          }),
        )
        log(
          `growth floor (ceiling) ${q.id}: p50 ${last.p50Ms} ms p99 ${last.p99Ms} ms${last.voidReason ? ` VOID: ${last.voidReason}` : ''}`,
        )
        if (!last.voidReason) break
      }
      floor[q.id] = {
        p50Ms: last.p50Ms,
        p99Ms: last.p99Ms,
        maxMs: last.maxMs,
        void: last.voidReason !== null,
        voidReason: last.voidReason,
        ceilingCpuPct: last.cpu.groupsPct.ceiling,
      }
    }
  } finally {
    await stop(ceiling.child)
  }
  return floor
}

async function durabilitySection(results) {
  const dbFile = join(tmp, 'durable.db')
  const key = await createBenchKey(dbFile)
  await seedSqlite(dbFile, 1000)
  const service = await startService({
    env: opts.serviceEnv,
    databaseUrl: dbFile,
    durability: 'power',
    logFile: join(tmp, 'service-power.log'),
    cpu: SERVER_CPU,
  })
  const groups = harnessGroups({ server: () => [service.pid] })
  const sc = SQLITE_SCENARIOS.post
  const section = { durability: 'power (synchronous=FULL: fsync per commit; concurrent inserts share one commit)', rounds: [] }
  results.durability = section
  const post = (connections, seconds) =>
    runWrk({ port: service.port, path: sc.path(), method: 'POST', body: sc.body, key: key.key, seconds, connections, cpu: LOAD_CPU })
  try {
    log(`durability: DURABILITY=power, warm-up ${opts.warmup}s`)
    if (opts.warmup > 0) await post(opts.connections, opts.warmup)
    for (let r = 1; r <= opts.rounds; r++) {
      for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
        const waited = await quiet(groups)
        const m = { groups, thresholdPct: opts.voidThreshold }
        const { grouped, single } = await withRestart(
          service,
          async () => ({
            grouped: await measured({ ...m, memoryPid: service.pid }, () => post(opts.connections, opts.duration)),
            single: await measured(m, () => post(1, opts.duration)),
          }),
          2,
          log,
          async () => opts.warmup > 0 && (await post(opts.connections, opts.warmup)),
        )
        const baseline = await measured(m, () =>
          runFsyncBaseline({ file: join(tmp, 'fsync-baseline.db'), seconds: Math.max(2, Math.round(opts.duration / 2)), cpu: SERVER_CPU }),
        )
        const voidReason = grouped.voidReason || single.voidReason || baseline.voidReason
        section.rounds.push({
          round: r,
          attempt,
          quietWait: waited,
          grouped,
          singleConnection: single,
          fsyncBaseline: baseline,
          void: !!voidReason,
          voidReason,
        })
        log(
          `durability round ${r}: power POST c=${opts.connections} ${grouped.rps} rps (${grouped.errorStatus} errors), ` +
            `c=1 ${single.rps} rps, single-row fsync'd commits ${baseline.rps}/s${voidReason ? ` VOID: ${voidReason}` : ''}`,
        )
        if (!voidReason) break
      }
    }
  } finally {
    await stop(service.child)
  }
  const valid = section.rounds.filter((r) => !r.void)
  const grouped = median(valid.map((r) => r.grouped.rps))
  const single = median(valid.map((r) => r.singleConnection.rps))
  const baseline = median(valid.map((r) => r.fsyncBaseline.rps))
  const processPost = results.sqlite?.scenarios?.find((s) => s.id === 'post')?.summary.rps ?? null
  section.summary = {
    validRounds: valid.length,
    powerGroupedRps: round2(grouped),
    powerGroupedP99Ms: round3(median(valid.map((r) => r.grouped.p99Ms))),
    powerSingleConnectionRps: round2(single),
    fsyncPerCommitPerSecond: round2(baseline),
    fsyncCommitP50Ms: round3(median(valid.map((r) => r.fsyncBaseline.p50Ms))),
    groupedVsFsyncPerRequest: grouped && baseline ? round2(grouped / baseline) : null,
    groupedVsSingleConnection: grouped && single ? round2(grouped / single) : null,
    processDurabilityPostRps: processPost,
    powerVsProcess: grouped && processPost ? round3(grouped / processPost) : null,
    httpErrors: valid.reduce((n, r) => n + r.grouped.errorStatus + r.grouped.socketErrors + r.singleConnection.errorStatus, 0),
    peakRssMb: Math.max(0, ...section.rounds.map((r) => r.grouped.memory?.peakRssMb ?? 0)),
  }
}

async function pgSection(results) {
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
    const { ceiling, wire, captured, captures } = await captureAndStartCeiling({ service, key: key.key, ids, ctx })
    const extraGroups = {
      // Our database's backends, and PostgreSQL's shared background processes (not other databases' backends).
      postgres: () =>
        findPids((cmd, comm) => comm === 'postgres' && (cmd.includes(` ${dbName} `) || !/\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(cmd))),
      redis: () => findPids((_cmd, comm) => comm === 'redis-server'),
    }
    let peer
    try {
      const peerIds = opts.peers ? ids.filter((id) => PEER_SCENARIOS.includes(id)) : []
      if (peerIds.length) {
        peer = await peerOrNothing(section, {
          kind: 'pg-redis',
          key: key.key,
          ids: peerIds,
          ctx,
          captured: peerIds.map((id) => captured[ids.indexOf(id)]),
          captures,
          databaseUrl,
        })
      }
      for (const id of ids) {
        const withPeer = peer && PEER_SCENARIOS.includes(id) ? peer : undefined
        const r = await runScenario({
          id,
          sc: SQLITE_SCENARIOS[id],
          backend: 'pg',
          ctx,
          service,
          ceiling,
          peer: withPeer,
          key: key.key,
          extraGroups,
        })
        r.wire = { ...wire[id], ...(withPeer ? { peer: section.peer.wire[id] } : {}) }
        section.scenarios.push(r)
      }
    } finally {
      await stop(ceiling.child)
      if (peer) await stop(peer.child)
    }
    section.status = 'ok'
  } catch (error) {
    section.status = 'not run'
    section.reason = `failed during the run: ${error.message}`
    log(`PG+Redis: ${section.reason}`)
  } finally {
    await stop(service.child)
  }
}

/**
 * `serve --workers N` with the Redis limiter (shared by the workers) on a SQLite file, for each N
 * of --workers: GET list20 under the same wrk load. The workers may run on both CPUs (taskset
 * 0,1) and wrk stays on CPU 0, so with 2 workers on a 2-CPU machine the load generator competes
 * with one of them: the scaling measured is what this machine gives, not the service's alone.
 */
async function clusterSection(results) {
  const section = {
    backend: 'SQLite + Redis limiter, serve --workers N (cluster)',
    status: 'not run',
    pinning: 'service (primary and workers) on CPUs 0,1; wrk on CPU 0',
    scenario: 'list20',
    runs: [],
  }
  results.cluster = section
  const dbFile = join(tmp, 'cluster.db')
  const key = await createBenchKey(dbFile)
  await seedSqlite(dbFile, opts.catalogue)
  const sc = SQLITE_SCENARIOS.list20
  for (const workers of opts.workers) {
    let service
    try {
      service = await startService({
        env: opts.serviceEnv,
        databaseUrl: dbFile,
        redisUrl: opts.redisUrl,
        logFile: join(tmp, `service-cluster-${workers}.log`),
        cpu: '0,1',
        workers,
      })
    } catch (error) {
      section.reason = `serve --workers ${workers} with REDIS_URL=${opts.redisUrl} did not start: ${error.message}`
      log(`cluster: not run: ${section.reason}`)
      return
    }
    const processes = () => [service.pid, ...childPids(service.pid)]
    const groups = harnessGroups({ server: processes, redis: () => findPids((_cmd, comm) => comm === 'redis-server') })
    const load = (seconds) =>
      runWrk({ port: service.port, path: sc.path(), key: key.key, seconds, connections: opts.connections, cpu: LOAD_CPU })
    const run = { workers, rounds: [] }
    section.runs.push(run)
    try {
      log(`cluster: serve --workers ${workers}, ${sc.name}: warm-up ${opts.warmup}s`)
      if (opts.warmup > 0) await load(opts.warmup)
      for (let r = 1; r <= opts.rounds; r++) {
        for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
          const waited = await quiet(groups)
          const m = await measured({ groups, thresholdPct: opts.voidThreshold }, () => load(opts.duration))
          const rssMb = processes().map((pid) => Math.round((readMemory(pid)?.rssKb ?? 0) / 102.4) / 10)
          run.rounds.push({ round: r, attempt, quietWait: waited, ...m, rssMb, void: m.voidReason !== null })
          log(
            `cluster workers=${workers} round ${r}: ${m.rps} rps, p99 ${m.p99Ms} ms, service CPU ${m.cpu.groupsPct.server}%, ` +
              `Redis ${m.cpu.groupsPct.redis}%, harness+wrk ${m.cpu.harnessPct}%${m.voidReason ? ` VOID: ${m.voidReason}` : ''}`,
          )
          if (!m.voidReason) break
        }
      }
    } finally {
      await stop(service.child)
    }
    const valid = run.rounds.filter((x) => !x.void)
    run.summary = {
      validRounds: valid.length,
      rps: round2(median(valid.map((x) => x.rps))),
      p50Ms: round3(median(valid.map((x) => x.p50Ms))),
      p99Ms: round3(median(valid.map((x) => x.p99Ms))),
      serviceCpuPct: round2(median(valid.map((x) => x.cpu.groupsPct.server))),
      redisCpuPct: round2(median(valid.map((x) => x.cpu.groupsPct.redis))),
      harnessCpuPct: round2(median(valid.map((x) => x.cpu.harnessPct))),
      totalBusyPct: round2(median(valid.map((x) => x.cpu.totalBusyPct))),
      peakRssMbPerProcess: Math.max(0, ...run.rounds.flatMap((x) => x.rssMb)),
      httpErrors: run.rounds.reduce((n, x) => n + x.errorStatus + x.socketErrors, 0),
    }
  }
  const one = section.runs.find((x) => x.workers === 1)?.summary.rps
  for (const x of section.runs) x.summary.vsOneWorker = one && x.summary.rps ? round2(x.summary.rps / one) : null
  section.status = 'ok'
}

// ---------------------------------------------------------------------------------------------

async function main() {
  preflight()
  const started = new Date()
  results = {
    version: 1,
    startedAt: started.toISOString(),
    quick: opts.quick,
    options: { ...opts, out: undefined },
    machine: machineInfo(),
    pinning: {
      serverCpu: SERVER_CPU,
      loadCpu: LOAD_CPU,
      note: 'server, ceiling and peers: taskset -c 1; wrk and paced generator: taskset -c 0',
    },
    peers: opts.peers ? PEERS : 'not run (--no-peers)',
    settings: {
      LOG_LEVEL: 'info',
      LOG_FILE: '<tmp>/service-*.log',
      DURABILITY: 'process unless stated',
      HOST: '127.0.0.1',
      BOOTSTRAP_KEY: 'false',
      NODE_ENV: 'production',
    },
  }
  log(`${opts.quick ? 'quick' : 'full'} run: ${opts.rounds} round(s) x ${opts.duration}s, ${opts.connections} connections; temp dir ${tmp}`)

  // A section that fails is recorded as such; the others still run.
  const section = async (name, key, fn) => {
    try {
      return await fn()
    } catch (error) {
      log(`${name}: FAILED: ${error.message}`)
      results[key] = { ...(results[key] ?? {}), status: 'failed', reason: error.message }
      return undefined
    }
  }
  let mainDb
  if (opts.only.includes('main')) mainDb = await section('SQLite scenarios', 'sqlite', () => sqliteSection(results))
  if (opts.profile && opts.only.includes('profile')) {
    await section('profile', 'profile', async () => profileSection(results, mainDb ?? (await freshCatalogue('profile'))))
  }
  if (opts.growth.length && opts.only.includes('growth')) await section('growth', 'growth', () => growthSection(results))
  if (opts.durability && opts.only.includes('durability')) await section('durability', 'durability', () => durabilitySection(results))
  if (opts.pg && opts.only.includes('pg')) await section('PG+Redis', 'pg', () => pgSection(results))
  else results.pg = { status: 'not run', reason: opts.quick ? 'skipped in --quick' : 'skipped (--no-pg or --only)', scenarios: [] }
  if (opts.cluster && opts.only.includes('cluster')) await section('cluster', 'cluster', () => clusterSection(results))

  writeResults(results)
}

function writeResults(r) {
  written = true
  r.targets = computeTargets(r)
  r.finishedAt = new Date().toISOString()
  r.durationSeconds = Math.round((Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000)
  mkdirSync(opts.out, { recursive: true })
  const base = join(opts.out, `${r.startedAt.slice(0, 10)}${opts.quick ? '-quick' : ''}`)
  writeFileSync(`${base}.json`, JSON.stringify(r, null, 2) + '\n')
  const md = markdownReport(r)
  writeFileSync(`${base}.md`, md)
  process.stdout.write(`\n${md}\n`)
  log(`wrote ${base}.json and ${base}.md${r.aborted ? ` (partial: ${r.aborted})` : ''}`)
}

try {
  await main()
} finally {
  await shutdown()
}
