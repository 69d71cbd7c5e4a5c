#!/usr/bin/env node
/**
 * What anonymous traffic costs the database: PostgreSQL transactions per 10 s of (1) made-up API
 * keys with valid checksums from one address (it is limited after 60 and then banned), (2)
 * made-up admin tokens from one address on the admin listener, (3) GET /readyz, and (4) an idle
 * server as the baseline (the key change poll). Each is counted with `pg_stat_database`
 * (xact_commit + xact_rollback) on a database of its own, created for the run and dropped at the
 * end, so that nothing else on the server is counted. While (1) runs, a valid key sends a request
 * every 50 ms and its median latency is reported.
 *
 *   npm run build && node bench/anonymous-db-cost.mjs [--seconds 10] [--connections 16] [--redis]
 *
 * Needs wrk, PostgreSQL (DATABASE_URL_PG or postgres://postgres@127.0.0.1:5432/test: a role that
 * may create a database) and, with --redis, Redis (REDIS_URL or redis://127.0.0.1:6379). Load goes
 * to 127.0.0.1 only; the server and wrk are stopped at the end, also on an error.
 */
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import pg from 'pg'
import { bearer, freePort, waitHealthy } from '../tools/http.mjs'
import { createKeyWithCli } from '../tools/service-cli.mjs'
import { serviceEnv } from '../tools/service-env.mjs'
import { distCli } from './lib/service.mjs'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    redis: { type: 'boolean', default: false },
  },
})
const SECONDS = Number(values.seconds)
const CONNECTIONS = Number(values.connections)
const ROOT = new URL('..', import.meta.url).pathname
const PG_URL = process.env.DATABASE_URL_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
/** PostgreSQL flushes a backend's counters when it goes idle, at the latest after 10 s (PGSTAT_IDLE_INTERVAL). */
const STATS_SETTLE_MS = 11_500
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const { generateKey, generateAdminToken } = await import('../dist/keys/api-key.js')

const dbName = `animal_store_anon_${process.pid}`
const dbUrl = (() => {
  const url = new URL(PG_URL)
  url.pathname = `/${dbName}`
  return url.toString()
})()

async function admin(sql) {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    return await client.query(sql)
  } finally {
    await client.end()
  }
}

async function transactions() {
  const { rows } = await admin(`SELECT (xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database WHERE datname = '${dbName}'`)
  return Number(rows[0].n)
}

/** The transactions `work` causes, counted once the server's connections have reported them. */
async function counted(work) {
  await sleep(STATS_SETTLE_MS)
  const before = await transactions()
  const result = await work()
  await sleep(STATS_SETTLE_MS)
  // The reading itself is a transaction on another database: not counted here. The latency probe's
  // reads of an animal are not what is measured either.
  return { ...result, transactions: (await transactions()) - before - (result.probeReads ?? 0) }
}

/** Asynchronous, so that the latency probe runs while wrk does. */
const runWrk = async (args) => (await promisify(execFile)('wrk', args, { encoding: 'utf8' })).stdout

async function wrk(port, path, linesFile, header) {
  const script = join(dir, `wrk-${Math.random().toString(36).slice(2)}.lua`)
  writeFileSync(
    script,
    `local lines = {}
for line in io.lines(${JSON.stringify(linesFile)}) do lines[#lines + 1] = line end
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", ${JSON.stringify(path)}, { [${JSON.stringify(header)}] = "Bearer " .. lines[(i % #lines) + 1] })
end
`,
  )
  const out = await runWrk(['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '-s', script, `http://127.0.0.1:${port}${path}`])
  return wrkFigures(out)
}

/** Requests sent and those not answered 2xx/3xx (429, 401, 503…), from wrk's report. */
const wrkFigures = (out) => ({
  requests: Number(/(\d+) requests in/.exec(out)[1]),
  non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
})

async function plainWrk(port, path) {
  const out = await runWrk(['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, `http://127.0.0.1:${port}${path}`])
  return wrkFigures(out)
}

/**
 * A valid key's requests every 50 ms while `work` runs: the median latency (ms). It asks for an
 * animal, one read on PostgreSQL (no instance keeps a copy of animals since orders change them):
 * `probeReads` of the transactions counted are the probe's own.
 */
async function withLatencyProbe(port, key, work) {
  const created = await fetch(`http://127.0.0.1:${port}/v1/pets`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'probe', categoryId: 1 }),
  })
  const { id } = await created.json()
  await (await fetch(`http://127.0.0.1:${port}/v1/pets/${id}`, { headers: bearer(key) })).arrayBuffer()
  const samples = []
  let failed = 0
  let running = true
  const probe = (async () => {
    while (running) {
      const started = performance.now()
      const res = await fetch(`http://127.0.0.1:${port}/v1/pets/${id}`, { headers: bearer(key) })
      await res.arrayBuffer()
      samples.push(performance.now() - started)
      if (res.status !== 200) failed++
      await sleep(50)
    }
  })()
  const result = await work()
  running = false
  await probe
  samples.sort((a, b) => a - b)
  const median = Number((samples[Math.floor(samples.length / 2)] ?? Number.NaN).toFixed(1))
  return {
    ...result,
    probeReads: samples.length + 1,
    validKey: `${median} ms median of ${samples.length}${failed ? `, ${failed} not 200` : ''}`,
  }
}

const dir = mkdtempSync(join(tmpdir(), 'animal-store-anon-'))
let server
try {
  await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)
  await admin(`CREATE DATABASE "${dbName}"`)
  const env = serviceEnv({
    NODE_ENV: 'production',
    DATABASE_URL: dbUrl,
    LOG_FILE: join(dir, 'server.log'),
    LIMITER_STATE_FILE: 'off',
    BOOTSTRAP_KEY: 'false',
    ...(values.redis ? { REDIS_URL } : {}),
  })
  const { key } = await createKeyWithCli(distCli(env), { plan: 'enterprise', name: 'probe', perMinute: 1_000_000, perDay: 100_000_000 })
  const guessedKeys = join(dir, 'keys.txt')
  writeFileSync(guessedKeys, Array.from({ length: 20_000 }, () => generateKey('production')).join('\n'))
  const guessedTokens = join(dir, 'tokens.txt')
  writeFileSync(guessedTokens, Array.from({ length: 20_000 }, () => generateAdminToken()).join('\n'))

  const port = await freePort()
  const adminPort = await freePort()
  server = spawn(process.execPath, ['dist/server.js'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', ADMIN_PORT: String(adminPort) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })))
  const child = { exited, err: '', out: '' }
  server.stderr.setEncoding('utf8').on('data', (s) => (child.err += s))
  await waitHealthy(port, child)

  const rows = []
  const idle = await counted(async () => {
    await sleep(SECONDS * 1000)
    return { requests: 0, non2xx: 0 }
  })
  rows.push(['idle server (baseline)', idle])
  rows.push([
    'made-up API keys, one address',
    await counted(() => withLatencyProbe(port, key, () => wrk(port, '/v1/pets?limit=1', guessedKeys, 'Authorization'))),
  ])
  rows.push(['made-up admin tokens, one address', await counted(() => wrk(adminPort, '/admin/v1/keys', guessedTokens, 'Authorization'))])
  rows.push(['GET /readyz', await counted(() => plainWrk(port, '/readyz'))])

  console.log(`PostgreSQL transactions per ${SECONDS} s (${CONNECTIONS} connections, limiter: ${values.redis ? 'redis' : 'memory'})`)
  console.log('| load | requests | not 2xx | transactions | a valid key meanwhile |')
  console.log('|---|---:|---:|---:|---|')
  for (const [name, r] of rows) console.log(`| ${name} | ${r.requests} | ${r.non2xx ?? ''} | ${r.transactions} | ${r.validKey ?? ''} |`)
} finally {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
  }
  await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch((error) => console.error(`dropping ${dbName}: ${error.message}`))
  rmSync(dir, { recursive: true, force: true })
}
