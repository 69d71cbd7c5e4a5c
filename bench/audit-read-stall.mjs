#!/usr/bin/env node
/**
 * Measures what filtered audit-log reads cost the public API: a server (a build, SQLite) whose
 * audit log holds --rows entries (generated in SQL, a month of them) answers a steady stream of
 * `GET /v1/pets?limit=10` from one key, first alone, then while one admin token repeats filtered
 * reads of the audit log (`actor`, `action`, `kind`, `from`, values that match few entries: the
 * worst case for a scan) as fast as they are answered, within the admin quota (9 a second). It
 * prints the public requests' latency (median, p90, p99, max) in both phases and the admin reads'.
 *
 *   npm run build && node bench/audit-read-stall.mjs [--rows 3000000] [--seconds 15] [--dist dist]
 *
 * `--dist DIR` runs another build (kept inside the project, so it finds node_modules), e.g. the
 * build of the commit before a change, for a before/after comparison on the same machine.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { freePort, waitHealthy } from '../tools/http.mjs'
import { createKeyWithCli } from '../tools/service-cli.mjs'
import { serviceEnv } from '../tools/service-env.mjs'
import { distCli } from './lib/service.mjs'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '3000000' },
    seconds: { type: 'string', default: '15' },
    dist: { type: 'string', default: 'dist' },
  },
})
const ROWS = Number(values.rows)
const PHASE_MS = Number(values.seconds) * 1000
const DIST = values.dist
const ROOT = new URL('..', import.meta.url).pathname
/** Within the admin quota (600 a minute): every read is answered by the read, never by a 429. */
const ADMIN_PER_SECOND = 9

const cli = (env, args) =>
  JSON.parse(execFileSync(process.execPath, [`${DIST}/cli.js`, ...args, '--json'], { cwd: ROOT, env, encoding: 'utf8' }))

/**
 * A month of entries, one every (month / rows): mostly admin reads by 40 tokens over 10,000 keys,
 * one in ten a change, one in fifty by the CLI. Times ascend with seq, as they are written.
 */
function fillAuditLog(file, rows, end) {
  const db = new Database(file)
  // Room for the indexes being filled: without it, the fill is bound by page reads (minutes, not seconds).
  db.pragma('cache_size = -1000000')
  const started = performance.now()
  const span = 30 * 24 * 3600 * 1000
  db.exec('BEGIN')
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO audit_log (at, actor_type, actor_id, action, key_id, details, request_id)
     SELECT ? + i * ? / ?,
            CASE WHEN i % 50 = 0 THEN 'cli' ELSE 'admin_token' END,
            CASE WHEN i % 50 = 0 THEN 'ops' ELSE 'adm_bench' || (i % 40) END,
            CASE i % 10 WHEN 0 THEN 'key.update' WHEN 1 THEN 'key.list' WHEN 2 THEN 'audit_log.list' WHEN 3 THEN 'key.usage'
                        WHEN 4 THEN 'key.usage_history' ELSE 'key.read' END,
            CASE WHEN i % 10 IN (1, 2) THEN NULL ELSE 'key_' || printf('%016d', i % 10000) END,
            '{"limit":20}', 'req-' || i
       FROM n`,
  ).run(rows, end - span, span, rows)
  db.exec('COMMIT')
  const count = db.prepare('SELECT COUNT(*) AS n FROM audit_log').get().n
  db.close()
  return { count, seconds: (performance.now() - started) / 1000 }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })

function get(port, path, headers) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }))
    })
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${path}: no answer within 30 s`)))
    req.on('error', reject)
    req.end()
  })
}

function summary(samples) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b)
  const at = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? Number.NaN
  const statuses = {}
  for (const s of samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1
  const f = (x) => x.toFixed(1)
  return `${ms.length} requests, median ${f(at(0.5))} ms, p90 ${f(at(0.9))} ms, p99 ${f(at(0.99))} ms, max ${f(ms.at(-1) ?? Number.NaN)} ms, statuses ${JSON.stringify(statuses)}`
}

/** One public request after another (closed loop, one connection) until `until`. */
async function publicLoad(port, key, until) {
  const samples = []
  while (performance.now() < until) samples.push(await get(port, '/v1/pets?limit=10', { authorization: `Bearer ${key}` }))
  return samples
}

/** The admin's filtered reads, one after another, at most ADMIN_PER_SECOND a second, until `until`. */
async function adminLoad(port, token, until, reads) {
  const samples = []
  let next = performance.now()
  for (let i = 0; performance.now() < until; i++) {
    const wait = next - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    next += 1000 / ADMIN_PER_SECOND
    samples.push({ ...(await get(port, reads[i % reads.length], { authorization: `Bearer ${token}` })), read: i % reads.length })
  }
  return samples
}

const dir = mkdtempSync(join(tmpdir(), 'animal-store-audit-stall-'))
const file = join(dir, 'store.db')
const env = serviceEnv({ DATABASE_URL: file, LIMITER_STATE_FILE: 'off', BOOTSTRAP_KEY: 'false' })
let server
try {
  const key = await createKeyWithCli(distCli(env, resolve(ROOT, DIST)), {
    plan: 'enterprise',
    name: 'stall',
    perMinute: 1_000_000_000,
    perDay: 1_000_000_000,
  })
  const admin = cli(env, ['admin-tokens', 'create', '--name', 'bench'])
  const now = Date.now()
  const filled = fillAuditLog(file, ROWS, now - 3_600_000)
  console.log(`${DIST}: audit log of ${filled.count} entries, generated in ${filled.seconds.toFixed(1)} s`)
  // Values that match few entries: the token's own reads, an action never taken, the changes of a token that only reads, the last minute.
  const from = new Date(now - 60_000).toISOString()
  const reads = [
    `/admin/v1/audit-log?actor=${admin.adminToken.id}&limit=20`,
    '/admin/v1/audit-log?action=key.rotate&limit=20',
    '/admin/v1/audit-log?kind=change&actor=adm_bench1&limit=20',
    `/admin/v1/audit-log?from=${encodeURIComponent(from)}&limit=20`,
  ]
  const port = await freePort()
  const adminPort = await freePort()
  server = spawn(process.execPath, [`${DIST}/server.js`], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), ADMIN_PORT: String(adminPort), NODE_ENV: 'production', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })))
  const child = { exited, err: '', out: '' }
  server.stderr.setEncoding('utf8').on('data', (s) => (child.err += s))
  await waitHealthy(port, child, { timeoutMs: 300_000 })
  // Warm-up: the code paths and SQLite's page cache.
  await publicLoad(port, key.key, performance.now() + 2000)
  for (const path of reads) await get(adminPort, path, { authorization: `Bearer ${admin.token}` })

  const alone = await publicLoad(port, key.key, performance.now() + PHASE_MS)
  console.log(`public API alone:              ${summary(alone)}`)
  const until = performance.now() + PHASE_MS
  const [together, adminReads] = await Promise.all([publicLoad(port, key.key, until), adminLoad(adminPort, admin.token, until, reads)])
  console.log(`public API during admin reads: ${summary(together)}`)
  console.log(`admin filtered reads:          ${summary(adminReads)}`)
  for (const [i, path] of reads.entries()) console.log(`  ${path}: ${summary(adminReads.filter((s) => s.read === i))}`)
} finally {
  server?.kill('SIGKILL')
  agent.destroy()
  rmSync(dir, { recursive: true, force: true })
}
