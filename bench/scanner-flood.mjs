#!/usr/bin/env node
// What the secret scanning endpoint (POST /v1/secret-scanning/github) costs under abuse from one
// address. The built server (dist/, or --dist DIR) runs pinned to CPU 1 with
// SECRET_SCANNING_PUBLIC_KEYS naming a key pair made here (standing for GitHub's), a fresh SQLite
// file and limiter for each phase:
//
//   unsigned  wrk (CPU 0) posts a 16 KiB report (100 well-formed items) without the signature
//             headers, for --seconds, while a valid key times GET /v1/pets?limit=1 every 50 ms
//             (also for --seconds before the flood, quiet);
//   forged    the same with GitHub's key identifier and a well-formed signature of other bytes
//             (every verification runs to its end);
//   replay    one report signed with that key, naming a real key, sent --replays times in a row
//             from one address (the default SECRET_SCANNING_ACTION, revoke).
//
// For the floods: the server's CPU time (utime+stime from /proc, not wall time: the machine is
// shared) over the flood divided by the requests wrk counted, the answers by status, and the
// probe's median and p99 quiet and under the flood. For the replays: the answers by status and the
// audit entries the replays left (key.leak_reported, key.revoke), read from the SQLite file.
// Loopback only, bounded (a hard deadline); every child is stopped at the end.
//
//   npm run build && node bench/scanner-flood.mjs [--dist dist] [--seconds 10] [--connections 32] [--replays 200] [--profile DIR]
//
// --profile DIR: the servers of the floods run under node --cpu-prof (the .cpuprofile files stay
// in DIR/<phase>/) and each flood's top functions (self time) are added to its figures.
import { createSign, generateKeyPairSync } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { freePort, waitHealthy } from '../tools/http.mjs'
import { CLK_TCK, readProcTimes } from '../tools/proc.mjs'
import { createKeyWithCli } from '../tools/service-cli.mjs'
import { serviceEnv } from '../tools/service-env.mjs'
import { installGuards, onCleanup, run, shutdown, start, stop } from './lib/children.mjs'
import { summariseProfile } from './lib/profile.mjs'
import { cliEnv, distCli, ROOT } from './lib/service.mjs'

const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    replays: { type: 'string', default: '200' },
    profile: { type: 'string' },
  },
})
const DIST = resolve(ROOT, options.dist)
const SECONDS = Number(options.seconds)
const PATH = '/v1/secret-scanning/github'

installGuards(5 * 60_000)
const dir = mkdtempSync(join(tmpdir(), 'scanner-flood-'))
onCleanup(() => rmSync(dir, { recursive: true, force: true }))
const say = (what) => process.stderr.write(`scanner-flood: ${what}\n`)

const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const KEY_ID = 'bench-key'
const keysFile = join(dir, 'github-keys.json')
writeFileSync(
  keysFile,
  JSON.stringify({
    public_keys: [{ key_identifier: KEY_ID, key: github.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }],
  }),
)
const sign = (body) => createSign('SHA256').update(body).sign(github.privateKey, 'base64')

/** A report of `items` well-formed matches padded to `bytes` (the body limit is 16 KiB). */
function reportOf(tokens, bytes) {
  const items = tokens.map((token, i) => ({
    token,
    type: 'animal_store_api_key',
    url: `https://github.com/o/r/blob/${i}/f`,
    source: 'content',
  }))
  const unpadded = JSON.stringify(items).length
  const pad = Math.max(0, Math.floor((bytes - unpadded) / items.length))
  for (const item of items) item.url += 'x'.repeat(pad)
  return JSON.stringify(items)
}
const madeUpToken = (i) => `as_live_${String(i).padStart(38, 'x')}`
const floodBody = reportOf(
  Array.from({ length: 100 }, (_, i) => madeUpToken(i)),
  16 * 1024 - 64,
)
const floodFile = join(dir, 'flood.json')
writeFileSync(floodFile, floodBody)

/** wrk's script: the body from a file, the optional headers, and the answers counted by status. */
const wrkScript = join(dir, 'flood.lua')
writeFileSync(
  wrkScript,
  `local threads = {}
function setup(thread) threads[#threads + 1] = thread end
function init(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  if args[2] ~= nil then
    wrk.headers["Github-Public-Key-Identifier"] = args[2]
    wrk.headers["Github-Public-Key-Signature"] = args[3]
  end
  statuses = {}
end
function response(status) statuses[status] = (statuses[status] or 0) + 1 end
function done()
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + n end
  end
  local parts = {}
  for status, n in pairs(total) do parts[#parts + 1] = string.format('"%d":%d', status, n) end
  io.write("STATUSES {" .. table.concat(parts, ",") .. "}\\n")
end
`,
)

async function startServer(name, profileDir) {
  const databaseUrl = join(dir, `${name}.db`)
  const probeKey = (
    await createKeyWithCli(distCli(cliEnv(databaseUrl), DIST), {
      plan: 'enterprise',
      name: 'probe',
      perMinute: 1_000_000,
      perDay: 1_000_000,
    })
  ).key
  const leaked = (await createKeyWithCli(distCli(cliEnv(databaseUrl), DIST), { plan: 'free', name: 'leaked' })).key
  const port = await freePort()
  const nodeFlags = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]
  const server = start('taskset', ['-c', '1', process.execPath, ...nodeFlags, join(DIST, 'server.js')], {
    cwd: ROOT,
    env: serviceEnv(
      {
        DATABASE_URL: databaseUrl,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_PORT: 'off',
        LOG_LEVEL: 'info',
        LOG_FILE: join(dir, `${name}.log`),
        BOOTSTRAP_KEY: 'false',
        LIMITER_STATE_FILE: 'off',
        SECRET_SCANNING_PUBLIC_KEYS: keysFile,
      },
      { minimal: true },
    ),
  })
  await waitHealthy(port, server)
  return { server, port, databaseUrl, probeKey, leaked }
}

/** A request every `everyMs` until stop(); the latencies (ms) of those that started within [from, to). */
function probe(port, path, headers, everyMs = 50) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  const samples = []
  let running = true
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      await new Promise((done) => {
        const req = http.get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
          res.resume()
          res.on('end', () => {
            samples.push({ at: started, ms: performance.now() - started, status: res.statusCode })
            done()
          })
        })
        req.setTimeout(5000, () => req.destroy())
        req.on('error', () => {
          samples.push({ at: started, ms: performance.now() - started, status: 0 })
          done()
        })
      })
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (performance.now() - started))))
    }
  })()
  return {
    between: (from, to) => samples.filter((s) => s.at >= from && s.at < to),
    async stop() {
      running = false
      await loop
      agent.destroy()
    },
  }
}

function stats(samples) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b)
  const at = (q) => Math.round((ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? Number.NaN) * 100) / 100
  return { n: ms.length, median: at(0.5), p99: at(0.99) }
}

const cpuSeconds = (pid) => readProcTimes(pid).own / CLK_TCK

/** The top functions of the newest profile in `profileDir` between two CLOCK_MONOTONIC microsecond stamps. */
function profileSummary(profileDir, fromUs, toUs) {
  const file = readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .at(-1)
  const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8'))
  return { file: join(profileDir, file), ...summariseProfile(profile, { root: ROOT, top: 25, fromUs, toUs }) }
}

async function flood(name, headerArgs, { quiet = false } = {}) {
  const profileDir = options.profile === undefined ? undefined : join(resolve(options.profile), name)
  if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true })
  const { server, port, probeKey } = await startServer(name, profileDir)
  const main = probe(port, '/v1/pets?limit=1', { authorization: `Bearer ${probeKey}` })
  await new Promise((r) => setTimeout(r, 1000)) // warm-up
  let quietStats
  if (quiet) {
    const from = performance.now()
    await new Promise((r) => setTimeout(r, SECONDS * 1000))
    quietStats = stats(main.between(from, performance.now()))
  }
  say(`${name}: flooding for ${SECONDS} s with ${options.connections} connections`)
  const cpuBefore = cpuSeconds(server.pid)
  const from = performance.now()
  const fromUs = Number(process.hrtime.bigint() / 1000n)
  const wrk = await run(
    'taskset',
    [
      '-c',
      '0',
      'wrk',
      '-t1',
      `-c${options.connections}`,
      `-d${SECONDS}s`,
      '-s',
      wrkScript,
      `http://127.0.0.1:${port}${PATH}`,
      '--',
      floodFile,
      ...headerArgs,
    ],
    { timeoutMs: (SECONDS + 30) * 1000 },
  )
  const to = performance.now()
  const toUs = Number(process.hrtime.bigint() / 1000n)
  const cpu = cpuSeconds(server.pid) - cpuBefore
  await main.stop()
  await stop(server)
  const profile = profileDir === undefined ? {} : { profile: profileSummary(profileDir, fromUs, toUs) }
  const requests = Number(/(\d+) requests in/.exec(wrk.stdout)?.[1])
  const statuses = JSON.parse(/STATUSES (\{.*\})/.exec(wrk.stdout)?.[1] ?? '{}')
  return {
    requests,
    perSecond: Math.round(requests / ((to - from) / 1000)),
    statuses,
    serverCpuSeconds: Math.round(cpu * 100) / 100,
    cpuMicrosecondsPerRequest: Math.round((cpu / requests) * 1e7) / 10,
    probe: { ...(quietStats ? { quiet: quietStats } : {}), underFlood: stats(main.between(from, to)) },
    ...profile,
  }
}

async function post(port, body, headers) {
  return new Promise((done, fail) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: PATH, method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        res.resume()
        res.on('end', () => done(res.statusCode))
      },
    )
    req.setTimeout(5000, () => req.destroy(new Error('timed out')))
    req.on('error', fail)
    req.end(body)
  })
}

async function replay() {
  const { server, port, databaseUrl, leaked } = await startServer('replay')
  const body = reportOf([leaked], 200)
  const headers = { 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': sign(body) }
  const statuses = {}
  const replays = Number(options.replays)
  say(`replay: one signed report, ${replays} times`)
  for (let i = 0; i < replays; i++) {
    const status = await post(port, body, headers)
    statuses[status] = (statuses[status] ?? 0) + 1
  }
  await stop(server)
  const db = new Database(databaseUrl, { readonly: true })
  const audit = Object.fromEntries(
    db
      .prepare("SELECT action, count(*) AS n FROM audit_log WHERE action IN ('key.leak_reported', 'key.revoke') GROUP BY action")
      .all()
      .map((r) => [r.action, r.n]),
  )
  db.close()
  return { replays, statuses, audit }
}

try {
  const report = {
    dist: options.dist,
    seconds: SECONDS,
    connections: Number(options.connections),
    bodyBytes: Buffer.byteLength(floodBody),
    unsigned: await flood('unsigned', [], { quiet: true }),
    forged: await flood('forged', [KEY_ID, sign(`${floodBody} `)]),
    replay: await replay(),
    loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  }
  process.stdout.write(`${JSON.stringify(report, null, 1)}\n`)
} finally {
  await shutdown()
}
