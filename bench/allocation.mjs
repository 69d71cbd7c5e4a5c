#!/usr/bin/env node
/**
 * Bytes allocated per request on PostgreSQL + Redis: the service (or the PostgreSQL peer) under one
 * wrk load, with `--trace-gc-nvp`; the `allocated=` of every GC during the measured run (V8's bytes
 * allocated since the GC before), summed and divided by the requests wrk counted. Also what the
 * young GCs promoted to the old generation per request. Bounded: a 3 s warm-up and one run of
 * `--duration` seconds, on 127.0.0.1, in a scratch database dropped after.
 *
 *   npm run build && node bench/allocation.mjs [--dist DIR] [--server service|peer] [--scenario list20|post] [--duration 8]
 *
 * `--dist` is a checkout's root whose dist/ is built (default this one): the build before a change
 * in a worktree, then this one, as an A/B. Needs wrk, PostgreSQL and Redis (the defaults of
 * `bench/run.mjs`, or DATABASE_URL_PG / REDIS_URL).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { benchServiceEnv, createBenchKey, createPgDatabase, dropPgDatabase, launchFlags, ROOT } from './lib/service.mjs'

const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: ROOT },
    server: { type: 'string', default: 'service' },
    scenario: { type: 'string', default: 'list20' },
    duration: { type: 'string', default: '8' },
  },
})
const root = resolve(values.dist)
if (!['service', 'peer'].includes(values.server)) throw new Error('--server: service or peer')
if (!['list20', 'post'].includes(values.scenario)) throw new Error('--scenario: list20 or post')
const duration = Number(values.duration)
if (!Number.isInteger(duration) || duration < 1 || duration > 60) throw new Error('--duration: whole seconds, 1 to 60')

const PG = process.env.DATABASE_URL_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const BODY = '{"name":"rex","categoryId":1,"status":"available"}'
const dir = mkdtempSync(join(tmpdir(), 'animal-store-alloc-'))
const database = `animal_store_alloc_${process.pid}`
const url = await createPgDatabase(PG, database)
let child
try {
  const { key } = await createBenchKey(url)
  const port = 20_000 + (process.pid % 20_000)
  const gcLog = join(dir, 'gc.log')
  // The peer reads its key from PEER_API_KEY; the service ignores it.
  const env = benchServiceEnv({
    port,
    databaseUrl: url,
    redisUrl: REDIS,
    logFile: join(dir, 'service.log'),
    extraEnv: { PEER_API_KEY: key },
  })
  // The service with the flags `npm start` gives it (its heap bound), the peer with node's defaults.
  const entry =
    values.server === 'peer'
      ? [join(root, 'bench/peers/pg-redis-peer.mjs'), String(port)]
      : [...(await launchFlags(env, root)), join(root, 'dist/server.js')]
  child = spawn('taskset', ['-c', '1', process.execPath, '--trace-gc-nvp', ...entry], {
    stdio: ['ignore', openSync(gcLog, 'w'), 'inherit'],
    env,
    cwd: root,
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    // Any answer: the peer has no /healthz.
    if ((await fetch(`${base}/healthz`).catch(() => undefined)) !== undefined) break
    if (i > 100) throw new Error('the server did not answer in 20 s')
    await new Promise((r) => setTimeout(r, 200))
  }
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  for (let i = 0; i < 25; i++) await fetch(`${base}/v1/pets`, { method: 'POST', headers, body: BODY })
  const script = join(dir, 'load.lua')
  writeFileSync(
    script,
    values.scenario === 'post'
      ? `wrk.method = "POST"\nwrk.body = '${BODY}'\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ${key}"\n`
      : `wrk.headers["Authorization"] = "Bearer ${key}"\n`,
  )
  const target = `${base}${values.scenario === 'post' ? '/v1/pets' : '/v1/pets?limit=20'}`
  const wrk = (seconds) => execFileSync('taskset', ['-c', '0', 'wrk', '-t1', '-c50', `-d${seconds}s`, '-s', script, target]).toString()
  wrk(3)
  const from = statSync(gcLog).size
  const report = wrk(duration)
  await new Promise((r) => setTimeout(r, 300))
  const requests = Number(/(\d+) requests in/.exec(report)?.[1])
  let allocated = 0
  let promoted = 0
  let gcs = 0
  for (const line of readFileSync(gcLog, 'utf8').slice(from).split('\n')) {
    const a = /allocated=(\d+)/.exec(line)
    const p = /promoted=(\d+)/.exec(line)
    if (a) {
      allocated += Number(a[1])
      gcs++
    }
    if (p) promoted += Number(p[1])
  }
  console.log(
    `${values.server} ${values.scenario} (${root}): ${requests} requests, ${(allocated / requests / 1024).toFixed(1)} KB allocated and ` +
      `${(promoted / requests).toFixed(0)} B promoted per request, ${gcs} GCs`,
  )
} finally {
  if (child) {
    child.kill('SIGTERM')
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r()))
  }
  await dropPgDatabase(PG, database)
  rmSync(dir, { recursive: true, force: true })
}
