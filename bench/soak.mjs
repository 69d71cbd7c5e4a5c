#!/usr/bin/env node
/**
 * Soak test: a bounded, steady, mixed load against a real server process, watching for leaks.
 *
 *   npm run soak                                     # = npm run build && node bench/soak.mjs: 300 s against dist/server.js
 *   SOAK_SECONDS=20 SOAK_SERVER=tsx node bench/soak.mjs
 *
 * The load (open loop, SOAK_RATE requests/s in total, default 1500, well below saturation):
 * creates, lists (limit, status and after varied), deprecated gets, and bad requests (400, 401,
 * 404, 405, 415; among the 400s a NUL in a name and the key itself with a character lost or added
 * as a query parameter), plus a throttled key at 10 requests/s against a 10/minute limit that produces
 * 429s and temporary bans (BAN_BASE_SECONDS 5, BAN_MAX_SECONDS 20, so bans recur during the run).
 * Every response status is checked against the set expected for its request type.
 *
 * Every SOAK_SAMPLE_SECONDS it samples the server's RSS (/proc/PID/status), its open file
 * descriptors (/proc/PID/fd; sockets counted apart), its CPU use, and the latency p50/p99 of the
 * window. After a warm-up (SOAK_WARMUP_SECONDS, default min(30 s, 20% of the run)), the first and
 * the last quarter of the samples are compared, each by its median: median RSS, median fd count,
 * and the median of the windows' p99 (one window hit by a burst of other work on the machine, or
 * by a major GC, moves a median little; a server that degrades moves all its windows).
 *
 * Two kinds of verdict, both in the JSON summary, either one makes the exit status 1:
 * - `failures`, what the service must never do, however busy the machine: an unexpected status (5xx,
 *   a network error, a timeout, or anything not in the expected set), a request never answered, a
 *   201 whose animal is not in the database after the run ("nothing lost"), no ban seen, a request
 *   type never exercised, an error line in the server log, a log line holding part of a key (past
 *   its display prefix), a server that died or did not stop cleanly on SIGTERM;
 * - `limitsExceeded`, the figures a busy machine moves too: RSS growth over SOAK_RSS_GROWTH_MB (30),
 *   fd growth over SOAK_FD_GROWTH (20), last-quarter p99 over SOAK_P99_FACTOR (2) x
 *   max(first-quarter p99, SOAK_P99_FLOOR_MS (10)), more than 25% of the planned requests not sent
 *   (saturated). test/system/bench/soak-short.test.ts (CI) asserts the failures only and prints these.
 * Exit status 2: setup failed. A short run (tens of seconds) cannot tell a slow leak from the heap
 * growing towards its first major GC: the leak verdict needs the full run.
 *
 * Progress goes to stderr; one JSON summary to stdout. Only 127.0.0.1; the server and the temp
 * directory are removed at the end, also on failure, Ctrl-C or SIGTERM (SOAK_KEEP_DIR=1 keeps the
 * directory). SOAK_SERVER: dist (default: node dist/server.js and dist/cli.js) or tsx (src/*.ts
 * through tsx). Processes, ports, health checks and /proc readings come from tools/ (and bench/lib/children.mjs).
 */
import { createReadStream, existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { bearer, freePort, waitHealthy } from '../tools/http.mjs'
import { CLK_TCK, countFds, readMemory, readProcTimes } from '../tools/proc.mjs'
import { createKeyWithCli, entryArgs } from '../tools/service-cli.mjs'
import { serviceEnv } from '../tools/service-env.mjs'
import { installGuards, onCleanup, run, shutdown, start, stop } from './lib/children.mjs'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

function badConfig(message) {
  process.stderr.write(`soak: ${message}\n`)
  process.exit(2)
}

function num(name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) badConfig(`${name} must be a positive number (got ${JSON.stringify(raw)})`)
  return value
}

const SECONDS = num('SOAK_SECONDS', 300)
const RATE = num('SOAK_RATE', 1500)
const THROTTLED_RATE = 10 // requests/s on the throttled key (limit 10/minute)
const SAMPLE_SECONDS = num('SOAK_SAMPLE_SECONDS', Math.min(5, Math.max(1, Math.round(SECONDS / 30))))
const WARMUP_SECONDS = num('SOAK_WARMUP_SECONDS', Math.min(30, SECONDS * 0.2))
const RSS_GROWTH_MB = num('SOAK_RSS_GROWTH_MB', 30)
const FD_GROWTH = num('SOAK_FD_GROWTH', 20)
const P99_FACTOR = num('SOAK_P99_FACTOR', 2)
const P99_FLOOR_MS = num('SOAK_P99_FLOOR_MS', 10)
const MAX_BEHIND_RATIO = 0.25
const MAX_IN_FLIGHT = 256
const REQUEST_TIMEOUT_MS = 10_000
/** The server's own shutdown deadline is 10 s (close-with-grace, then exit 1): wait longer than that. */
const STOP_WAIT_MS = 30_000
const SERVER_MODE = process.env.SOAK_SERVER || 'dist'
if (SERVER_MODE !== 'dist' && SERVER_MODE !== 'tsx') badConfig(`SOAK_SERVER must be dist or tsx (got ${JSON.stringify(SERVER_MODE)})`)

const log = (message) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const round = (n, digits = 2) => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : null)
const quantile = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))])
const median = (values) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  )

// ---------------------------------------------------------------------------------------------
// Processes: the CLI (keys) and the server, through bench/lib/children.mjs (nothing outlives this
// script: the server is stopped at the end, on an error, on SIGINT/SIGTERM and at a hard deadline).

const entry = (name) => entryArgs(name, { source: SERVER_MODE === 'tsx' })

async function createKey(db, name, perMinute, perDay) {
  const cli = (args) =>
    run(process.execPath, [...entry('cli'), ...args], {
      cwd: ROOT,
      env: serviceEnv({ DATABASE_URL: db, LOG_LEVEL: 'warn' }),
      timeoutMs: 60_000,
    })
  return (await createKeyWithCli(cli, { plan: 'enterprise', name, perMinute, perDay })).key
}

/** The server's RSS, open fds (sockets apart) and CPU time, from /proc. */
function procSample(pid) {
  const times = readProcTimes(pid)
  return { rssMb: (readMemory(pid)?.rssKb ?? NaN) / 1024, ...countFds(pid), cpuSeconds: (times?.own ?? NaN) / CLK_TCK }
}

// ---------------------------------------------------------------------------------------------
// The request mix. Each type: weight (share of SOAK_RATE), the request, the statuses it may get.

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
let port
let mainKey
let throttledKey
const knownIds = [] // ring of ids returned by 201s
/** Every 201 of the run: id -> name, checked against the database after the server stopped. */
const acknowledged = new Map()
let created = 0
let rotor = 0
const pick = (array) => array[Math.floor(Math.random() * array.length)]
const knownId = () => (knownIds.length ? pick(knownIds) : 1)
const auth = () => bearer(mainKey)
const STATUSES = ['available', 'pending', 'sold']
const FAKE_KEY = 'as_live_' + 'A'.repeat(32) + 'zzzzzz' // well-formed, wrong checksum: refused without storage

const TYPES = {
  list: {
    weight: 40,
    expect: [200],
    make() {
      const q = new URLSearchParams({ limit: String(1 + Math.floor(Math.random() * 100)) })
      if (Math.random() < 0.6) q.set('status', pick(STATUSES))
      if (Math.random() < 0.5) q.set('after', String(Math.max(0, knownId() - 50)))
      return { method: 'GET', path: `/v1/pets?${q}`, headers: auth() }
    },
    check: (_res, body) => Array.isArray(body) || 'body is not an array',
  },
  create: {
    weight: 15,
    expect: [201],
    make() {
      const n = created++
      const pet = { name: `soak-${n}`, categoryId: n % 1000 }
      if (n % 4) pet.status = STATUSES[n % 3]
      return { method: 'POST', path: '/v1/pets', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(pet) }
    },
    check(_res, body) {
      if (typeof body?.id !== 'number') return 'no id in the 201 body'
      acknowledged.set(body.id, body.name)
      if (knownIds.length < 2000) knownIds.push(body.id)
      else knownIds[rotor++ % 2000] = body.id
      return true
    },
  },
  deprecatedGet: {
    weight: 15,
    expect: [200],
    make: () => ({ method: 'GET', path: `/v1/pets/${knownId()}`, headers: auth() }),
    check: (res) => (res.headers.deprecation !== undefined && res.headers.sunset !== undefined) || 'no Deprecation/Sunset headers',
  },
  missingPet: {
    weight: 3,
    expect: [404],
    make: () => ({ method: 'GET', path: '/v1/pets/999999999999', headers: auth() }),
  },
  badQuery: {
    weight: 4,
    expect: [400],
    make: () => ({
      method: 'GET',
      path: `/v1/pets?${pick(['limit=0', 'limit=101', 'limit=1e1', 'status=lost', 'limt=5', 'after=-1'])}`,
      headers: auth(),
    }),
  },
  badBody: {
    weight: 4,
    expect: [400],
    make: () => ({
      method: 'POST',
      path: '/v1/pets',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: pick(['{"name":"","categoryId":1}', '{"name":"x","categoryId":"5"}', '{"name":"x"', '{"name":"x","categoryId":1,"id":7}', '']),
    }),
  },
  unknownRoute: {
    weight: 3,
    expect: [404],
    make: () => ({ method: 'GET', path: pick(['/v1/animals', '/v2/pets', '/v1/pets/1/owner']), headers: auth() }),
  },
  methodNotAllowed: {
    weight: 3,
    expect: [405],
    make: () =>
      Math.random() < 0.5
        ? { method: 'DELETE', path: '/v1/pets', headers: auth() }
        : { method: 'PUT', path: `/v1/pets/${knownId()}`, headers: auth() },
    check: (res) => res.headers.allow !== undefined || 'no Allow header',
  },
  wrongMediaType: {
    weight: 3,
    expect: [415],
    make: () => ({ method: 'POST', path: '/v1/pets', headers: { ...auth(), 'content-type': 'text/plain' }, body: 'name=x' }),
  },
  // Text a store or a log must not take as it is: a NUL (PostgreSQL refuses it), a key with a
  // character lost or added, pasted as a query parameter's name or value (never echoed or logged).
  hostileText: {
    weight: 3,
    expect: [400],
    make() {
      const text = pick([
        { body: '{"name":"Rex\\u0000","categoryId":1}' },
        { query: `${encodeURIComponent(mainKey.slice(0, -1))}=1` },
        { query: `${encodeURIComponent(`${mainKey.slice(0, 20)}x${mainKey.slice(20)}`)}=1` },
        { query: `api_key=${encodeURIComponent(mainKey.slice(0, -1))}` },
      ])
      return text.body !== undefined
        ? { method: 'POST', path: '/v1/pets', headers: { ...auth(), 'content-type': 'application/json' }, body: text.body }
        : { method: 'GET', path: `/v1/pets?${text.query}`, headers: auth() }
    },
    check: (_res, body) => !/as_live_[0-9A-Za-z]{5}/.test(String(body?.message)) || `the 400 quotes a key: ${body?.message}`,
  },
  // Keyless requests are limited per client address at the Free plan's rates: 401 until limited, then 429.
  noKey: {
    weight: 5,
    expect: [401, 429],
    make: () => ({ method: 'GET', path: '/v1/pets', headers: {} }),
  },
  badKey: {
    weight: 5,
    expect: [401, 429],
    make: () => ({ method: 'GET', path: '/v1/pets', headers: bearer(pick([FAKE_KEY, 'not-a-key', 'as_test_x'])) }),
  },
  // Not part of the weighted mix: sent at THROTTLED_RATE against a 10/minute limit.
  throttled: {
    weight: 0,
    expect: [200, 429],
    make: () => ({ method: 'GET', path: '/v1/pets?limit=5', headers: bearer(throttledKey) }),
  },
}
const WEIGHTED = Object.entries(TYPES).filter(([, t]) => t.weight > 0)
const TOTAL_WEIGHT = WEIGHTED.reduce((sum, [, t]) => sum + t.weight, 0)
function pickType() {
  let r = Math.random() * TOTAL_WEIGHT
  for (const [name, type] of WEIGHTED) {
    r -= type.weight
    if (r < 0) return name
  }
  return WEIGHTED[0][0]
}

// Per type: counts by status; error codes of 429s.
const byType = Object.fromEntries(Object.keys(TYPES).map((name) => [name, { sent: 0, statuses: {} }]))
const codes429 = {} // `${type}:${code}` -> n
const unexpected = { count: 0, examples: [] }
let window = [] // latencies (ms) of the current sample window
let inFlight = 0
let sent = 0
let behind = 0

function recordUnexpected(type, what) {
  unexpected.count++
  if (unexpected.examples.length < 20) unexpected.examples.push({ type, ...what })
}

function fire(typeName) {
  const type = TYPES[typeName]
  const spec = type.make()
  const stats = byType[typeName]
  stats.sent++
  sent++
  inFlight++
  const t0 = performance.now()
  let done = false
  const finish = (status, res, text) => {
    if (done) return
    done = true
    inFlight--
    window.push(performance.now() - t0)
    stats.statuses[status] = (stats.statuses[status] ?? 0) + 1
    if (!type.expect.includes(status)) {
      recordUnexpected(typeName, { method: spec.method, path: spec.path, status, body: text?.slice(0, 200) })
      return
    }
    let body
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      recordUnexpected(typeName, { method: spec.method, path: spec.path, status, problem: 'body is not JSON', body: text.slice(0, 200) })
      return
    }
    if (status >= 400) {
      if (body?.status !== status || typeof body?.code !== 'string') {
        recordUnexpected(typeName, {
          method: spec.method,
          path: spec.path,
          status,
          problem: 'not the Error shape',
          body: text.slice(0, 200),
        })
        return
      }
      if (status === 429) codes429[`${typeName}:${body.code}`] = (codes429[`${typeName}:${body.code}`] ?? 0) + 1
    }
    const verdict = type.check ? type.check(res, body) : true
    if (verdict !== true) recordUnexpected(typeName, { method: spec.method, path: spec.path, status, problem: verdict })
  }
  const headers = { ...spec.headers }
  if (spec.body !== undefined) headers['content-length'] = String(Buffer.byteLength(spec.body))
  const req = http.request({ host: '127.0.0.1', port, method: spec.method, path: spec.path, headers, agent }, (res) => {
    const chunks = []
    res.on('data', (c) => chunks.push(c))
    res.on('end', () => finish(res.statusCode, res, Buffer.concat(chunks).toString('utf8')))
    res.on('error', (e) => finish(`error:${e.code ?? e.message}`))
  })
  req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })))
  req.on('error', (e) => finish(`error:${e.code ?? e.message}`))
  req.end(spec.body)
}

// ---------------------------------------------------------------------------------------------

/** Error lines of the server's log, and lines holding more of one of `keys` than its display prefix (8 characters in a row past it). */
async function scanLog(file, keys) {
  if (!existsSync(file)) return { lines: 0, errors: 0, examples: [], secrets: 0 }
  let lines = 0
  let errors = 0
  let secrets = 0
  const examples = []
  const fragments = keys.flatMap((key) => [key.slice(12, 20), key.slice(20, 28), key.slice(28, 36), key.slice(-8)])
  const rl = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })
  for await (const line of rl) {
    lines++
    // The service writes level names (`"level":"error"`).
    if (/"level":"(error|fatal)"/.test(line)) {
      errors++
      if (examples.length < 5) examples.push(line.slice(0, 300))
    }
    if (fragments.some((f) => line.includes(f))) secrets++
  }
  return { lines, errors, examples, secrets }
}

/** Every animal acknowledged with a 201 is in the database, with its name (read after the server stopped). */
async function lostCreates(db) {
  const { default: Database } = await import('better-sqlite3')
  const sqlite = new Database(db, { readonly: true, fileMustExist: true })
  try {
    const byId = sqlite.prepare('SELECT name FROM pets WHERE id = ?')
    const examples = []
    let missing = 0
    for (const [id, name] of acknowledged) {
      if (byId.get(id)?.name === name) continue
      missing++
      if (examples.length < 5) examples.push(id)
    }
    return { acknowledged: acknowledged.size, missing, examples }
  } finally {
    sqlite.close()
  }
}

async function main() {
  if (SERVER_MODE === 'dist' && !existsSync(join(ROOT, 'dist', 'server.js'))) {
    throw new Error('dist/server.js is missing: run `npm run build` first (or SOAK_SERVER=tsx)')
  }
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-soak-'))
  onCleanup(async () => {
    if (process.env.SOAK_KEEP_DIR) log(`kept ${dir}`)
    else await rm(dir, { recursive: true, force: true })
  })
  const db = join(dir, 'soak.db')
  const logFile = join(dir, 'server.log')
  ;[mainKey, throttledKey] = await Promise.all([
    createKey(db, 'soak-main', 10_000_000, 100_000_000),
    createKey(db, 'soak-throttled', 10, 1_000_000),
  ])
  port = await freePort()
  const adminPort = await freePort()
  const url = `http://127.0.0.1:${port}`
  const server = start(process.execPath, entry('server'), {
    cwd: ROOT,
    env: serviceEnv({
      PORT: String(port),
      ADMIN_PORT: String(adminPort), // /metrics is read there

      HOST: '127.0.0.1',
      DATABASE_URL: db,
      LOG_FILE: logFile,
      LOG_LEVEL: 'info',
      BOOTSTRAP_KEY: 'false',
      BAN_BASE_SECONDS: '5',
      BAN_MAX_SECONDS: '20',
    }),
  })
  await waitHealthy(port, server, { timeoutMs: 60_000 })
  const pid = server.pid
  log(
    `server pid ${pid} on ${url} (${SERVER_MODE}); ${SECONDS} s at ${RATE} req/s + ${THROTTLED_RATE} req/s throttled; samples every ${SAMPLE_SECONDS} s, warm-up ${WARMUP_SECONDS} s`,
  )

  // A few animals to get and page through from the start.
  for (let i = 0; i < 50; i++) {
    await new Promise((resolve) => {
      const t = TYPES.create
      const spec = t.make()
      const req = http.request({ host: '127.0.0.1', port, method: spec.method, path: spec.path, headers: spec.headers, agent }, (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => {
          if (res.statusCode === 201) t.check(res, JSON.parse(text))
          resolve()
        })
      })
      req.on('error', resolve)
      req.end(spec.body)
    })
  }

  const loadStart = loadavg()
  const eventLoop = monitorEventLoopDelay({ resolution: 10 })
  eventLoop.enable()
  const samples = []
  const windows = [] // { t, latencies }
  const started = performance.now()
  let lastProc = procSample(pid)
  let lastSampleAt = started
  let sentAtLastSample = 0

  const takeSample = () => {
    const now = performance.now()
    const proc = procSample(pid)
    const latencies = window.sort((a, b) => a - b)
    window = []
    const seconds = (now - lastSampleAt) / 1000
    const sample = {
      t: round((now - started) / 1000, 1),
      rssMb: round(proc.rssMb, 1),
      fds: proc.fds,
      sockets: proc.sockets,
      cpuPct: round(((proc.cpuSeconds - lastProc.cpuSeconds) / seconds) * 100, 0),
      rps: Math.round((sent - sentAtLastSample) / seconds),
      answered: latencies.length,
      p50: round(quantile(latencies, 0.5)),
      p99: round(quantile(latencies, 0.99)),
      inFlight,
      loopDelayP99: round(eventLoop.percentile(99) / 1e6),
    }
    eventLoop.reset()
    windows.push({ t: sample.t, latencies })
    samples.push(sample)
    lastProc = proc
    lastSampleAt = now
    sentAtLastSample = sent
    log(
      `t=${sample.t}s rss=${sample.rssMb}MB fds=${sample.fds} (sockets ${sample.sockets}) cpu=${sample.cpuPct}% ` +
        `rps=${sample.rps} p50=${sample.p50}ms p99=${sample.p99}ms unexpected=${unexpected.count}`,
    )
  }

  // Open-loop pacing: every 5 ms, send what is due. A backlog of more than 100 ms (an event-loop
  // stall) is not caught up in a burst; requests over MAX_IN_FLIGHT are not sent. Both count as "behind".
  let planned = 0
  let plannedThrottled = 0
  const endAt = started + SECONDS * 1000
  await new Promise((resolve) => {
    const pacer = setInterval(() => {
      const now = performance.now()
      if (now >= endAt) {
        clearInterval(pacer)
        clearInterval(sampler)
        resolve()
        return
      }
      const elapsed = (now - started) / 1000
      let due = Math.floor(elapsed * RATE) - planned
      planned += due
      const cap = Math.ceil(RATE / 10)
      if (due > cap) {
        behind += due - cap
        due = cap
      }
      for (let i = 0; i < due; i++) {
        if (inFlight >= MAX_IN_FLIGHT) {
          behind += due - i
          break
        }
        fire(pickType())
      }
      const dueThrottled = Math.floor(elapsed * THROTTLED_RATE) - plannedThrottled
      plannedThrottled += dueThrottled
      for (let i = 0; i < Math.min(dueThrottled, THROTTLED_RATE); i++) fire('throttled')
    }, 5)
    const sampler = setInterval(takeSample, SAMPLE_SECONDS * 1000)
  })

  // Drain, then the final figures.
  const drainDeadline = performance.now() + REQUEST_TIMEOUT_MS + 2000
  while (inFlight > 0 && performance.now() < drainDeadline) await sleep(20)
  const unanswered = inFlight
  // A last window only if it is not a sliver (a few stragglers would make a meaningless p99).
  if (window.length > 0 && performance.now() - lastSampleAt >= (SAMPLE_SECONDS * 1000) / 2) takeSample()
  eventLoop.disable()
  const loadEnd = loadavg()
  const elapsedSeconds = (performance.now() - started) / 1000

  let metricsBans = null
  try {
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`, { signal: AbortSignal.timeout(5000) })).text()
    metricsBans = Number(/^animal_store_bans_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? NaN)
  } catch {
    // reported as null
  }
  const stillRunning = server.exitCode === null && server.signalCode === null

  // Graceful stop (SIGKILL after STOP_WAIT_MS: reported as an unclean stop).
  const stopStarted = performance.now()
  const exit = stillRunning ? await stop(server, STOP_WAIT_MS) : null
  const shutdownMs = Math.round(performance.now() - stopStarted)
  const logScan = await scanLog(logFile, [mainKey, throttledKey])
  agent.destroy()
  const lost = await lostCreates(db)

  // ---- Verdict: failures (never acceptable) and limits (figures a busy machine moves too).
  const failures = []
  const limitsExceeded = []
  const post = samples.filter((s) => s.t >= WARMUP_SECONDS)
  const quarter = Math.max(1, Math.floor(post.length / 4))
  const firstQ = post.slice(0, quarter)
  const lastQ = post.slice(-quarter)
  const latencyOf = (q) => {
    const ts = new Set(q.map((s) => s.t))
    const all = windows
      .filter((w) => ts.has(w.t))
      .flatMap((w) => w.latencies)
      .sort((a, b) => a - b)
    return {
      requests: all.length,
      p99: round(median(q.map((s) => s.p99).filter(Number.isFinite))), // median of the windows' p99
      p50: round(median(q.map((s) => s.p50).filter(Number.isFinite))),
      pooledP99: round(quantile(all, 0.99)),
      worstWindowP99: round(Math.max(...q.map((s) => s.p99).filter(Number.isFinite))),
      generatorLoopDelayP99: round(median(q.map((s) => s.loopDelayP99))),
    }
  }
  const rss = {
    firstSampleMb: samples[0]?.rssMb ?? null,
    startMb: round(median(firstQ.map((s) => s.rssMb)), 1),
    endMb: round(median(lastQ.map((s) => s.rssMb)), 1),
    peakMb: round(Math.max(...samples.map((s) => s.rssMb)), 1),
  }
  rss.growthMb = round(rss.endMb - rss.startMb, 1)
  const fds = {
    firstSample: samples[0]?.fds ?? null,
    start: median(firstQ.map((s) => s.fds)),
    end: median(lastQ.map((s) => s.fds)),
    max: Math.max(...samples.map((s) => s.fds)),
    socketsStart: median(firstQ.map((s) => s.sockets)),
    socketsEnd: median(lastQ.map((s) => s.sockets)),
  }
  fds.growth = fds.end - fds.start
  const latency = { first: latencyOf(firstQ), last: latencyOf(lastQ) }
  latency.limitMs = round(P99_FACTOR * Math.max(latency.first.p99, P99_FLOOR_MS))

  if (post.length < 4) failures.push(`too few samples after the warm-up (${post.length}); run longer`)
  if (unexpected.count > 0) failures.push(`${unexpected.count} unexpected responses (see unexpectedExamples)`)
  if (unanswered > 0) failures.push(`${unanswered} requests never answered`)
  if (lost.missing > 0)
    failures.push(
      `${lost.missing} of ${lost.acknowledged} animals acknowledged with a 201 are not in the database after the run (e.g. ${lost.examples.join(', ')})`,
    )
  if (!(rss.growthMb <= RSS_GROWTH_MB))
    limitsExceeded.push(`RSS grew ${rss.growthMb} MB from the first to the last quarter (limit ${RSS_GROWTH_MB} MB)`)
  if (!(fds.growth <= FD_GROWTH))
    limitsExceeded.push(`open fds grew by ${fds.growth} from the first to the last quarter (limit ${FD_GROWTH})`)
  if (!(latency.last.p99 <= latency.limitMs)) {
    limitsExceeded.push(
      `median window p99 of the last quarter ${latency.last.p99} ms > ${P99_FACTOR} x max(first quarter ${latency.first.p99} ms, ${P99_FLOOR_MS} ms)`,
    )
  }
  for (const [name, stats] of Object.entries(byType)) if (stats.sent === 0) failures.push(`request type ${name} was never sent`)
  const bans = {
    throttledRateLimited: codes429['throttled:rate_limited'] ?? 0,
    throttledBanned: codes429['throttled:key_banned'] ?? 0,
    keylessRateLimited: (codes429['noKey:rate_limited'] ?? 0) + (codes429['badKey:rate_limited'] ?? 0),
    keylessBanned: (codes429['noKey:key_banned'] ?? 0) + (codes429['badKey:key_banned'] ?? 0),
    bansStartedPerMetrics: metricsBans,
  }
  if (bans.throttledRateLimited === 0) failures.push('the throttled key never got 429 rate_limited')
  if (bans.throttledBanned === 0) failures.push('the throttled key was never banned (429 key_banned)')
  const plannedAll = planned + plannedThrottled
  if (behind > plannedAll * MAX_BEHIND_RATIO) {
    limitsExceeded.push(`${behind} of ${plannedAll} planned requests were not sent: the load generator or the server was saturated`)
  }
  if (!stillRunning) failures.push(`the server died during the run (${server.exitCode ?? server.signalCode}): ${server.err.slice(-500)}`)
  else if (exit.signal === 'SIGKILL') failures.push(`the server did not exit within ${STOP_WAIT_MS / 1000} s of SIGTERM`)
  else if (exit.code !== 0) failures.push(`the server exited with ${exit.code ?? exit.signal} after SIGTERM`)
  if (logScan.errors > 0) failures.push(`${logScan.errors} error lines in the server log`)
  if (logScan.secrets > 0) failures.push(`${logScan.secrets} lines of the server log hold part of a key`)

  const summary = {
    pass: failures.length === 0 && limitsExceeded.length === 0,
    failures,
    limitsExceeded,
    config: {
      seconds: SECONDS,
      rate: RATE,
      throttledRate: THROTTLED_RATE,
      server: SERVER_MODE,
      sampleSeconds: SAMPLE_SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      thresholds: {
        rssGrowthMb: RSS_GROWTH_MB,
        fdGrowth: FD_GROWTH,
        p99Factor: P99_FACTOR,
        p99FloorMs: P99_FLOOR_MS,
        maxBehindRatio: MAX_BEHIND_RATIO,
      },
      comparison: "after the warm-up, the first quarter of the samples vs the last: median RSS, median fds, median of the windows' p99",
    },
    requests: {
      sent,
      achievedRate: Math.round(sent / elapsedSeconds),
      planned: plannedAll,
      behind,
      unexpected: unexpected.count,
      unanswered,
      byType: Object.fromEntries(
        Object.entries(byType).map(([name, s]) => [name, { sent: s.sent, expect: TYPES[name].expect, statuses: s.statuses }]),
      ),
      codes429,
    },
    unexpectedExamples: unexpected.examples,
    creates: lost,
    bans,
    rss,
    fds,
    latency,
    server: {
      pid,
      stillRunningAtEnd: stillRunning,
      exit,
      shutdownMs,
      logLines: logScan.lines,
      errorLogLines: logScan.errors,
      errorLogExamples: logScan.examples,
      secretLogLines: logScan.secrets,
    },
    machine: { loadavgStart: loadStart.map((n) => round(n)), loadavgEnd: loadEnd.map((n) => round(n)) },
    samples,
  }
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n')
  log(summary.pass ? 'PASS' : `FAIL: ${[...failures, ...limitsExceeded].join('; ')}`)
  return summary.pass ? 0 : 1
}

installGuards((SECONDS + 180) * 1000)
let status = 2
try {
  status = await main()
} catch (error) {
  log(`setup failed: ${error instanceof Error ? error.stack : String(error)}`)
  status = 2
} finally {
  await shutdown()
}
process.exit(status)
