#!/usr/bin/env node
// What a flood of refusals from one client costs the others: the built server (dist/server.js, or
// --dist DIR, pinned to CPU 1) gets a wrk flood (pinned to CPU 0) of GET /v1/pets with a made-up
// key from 127.0.0.1 (401s, then 429 rate_limited, then 429 key_banned for the address), while a
// second client with a valid key (GET /v1/pets?limit=1) and a probe of the admin listener
// (GET /healthz) send a request every 50 ms each and time it. Reports the server's CPU per refused
// request (its CPU time over the flood / requests wrk counted) and the probes' median and p99,
// quiet and under the flood. Loopback only, bounded (--seconds per phase, a hard deadline).
//
//   node bench/refusal-cost.mjs [--dist dist] [--seconds 10] [--connections 32] [--profile DIR]
//
// --profile DIR: the server runs under node --cpu-prof and a summary of the flood's profile (self
// time per function) is printed; the .cpuprofile stays in DIR. Not part of `npm run bench`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
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
    profile: { type: 'string' },
  },
})
const DIST = resolve(ROOT, options.dist)
const SECONDS = Number(options.seconds)

installGuards(5 * 60_000)
const dir = mkdtempSync(join(tmpdir(), 'refusal-cost-'))
onCleanup(() => rmSync(dir, { recursive: true, force: true }))
const say = (what) => process.stderr.write(`refusal-cost: ${what}\n`)

const databaseUrl = join(dir, 'store.db')

/** A key far above what the probe sends, made with the CLI of the build under test. */
const createKey = async () =>
  (
    await createKeyWithCli(distCli(cliEnv(databaseUrl), DIST), {
      plan: 'enterprise',
      name: 'probe',
      perMinute: 1_000_000,
      perDay: 1_000_000,
    })
  ).key

/** A request every `everyMs` until stop(); resolves with the latencies (ms) of those that started within [from, to). */
function probe(port, path, headers, everyMs = 50) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  const samples = []
  let running = true
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      await new Promise((resolve) => {
        const req = http.get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
          res.resume()
          res.on('end', () => {
            samples.push({ at: started, ms: performance.now() - started, status: res.statusCode })
            resolve()
          })
        })
        req.setTimeout(5000, () => req.destroy())
        req.on('error', () => {
          samples.push({ at: started, ms: performance.now() - started, status: 0 })
          resolve()
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
  const statuses = {}
  for (const s of samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1
  return { n: ms.length, median: at(0.5), p99: at(0.99), max: at(1), statuses }
}

const cpuSeconds = (pid) => readProcTimes(pid).own / CLK_TCK

try {
  const key = await createKey()
  const port = await freePort()
  const adminPort = await freePort()
  const profileDir = options.profile === undefined ? undefined : resolve(options.profile)
  const nodeFlags = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]
  const server = start('taskset', ['-c', '1', process.execPath, ...nodeFlags, join(DIST, 'server.js')], {
    cwd: ROOT,
    env: serviceEnv(
      {
        DATABASE_URL: databaseUrl,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        LOG_LEVEL: 'info',
        LOG_FILE: join(dir, 'service.log'),
        BOOTSTRAP_KEY: 'false',
      },
      { minimal: true },
    ),
  })
  await waitHealthy(port, server)
  const main = probe(port, '/v1/pets?limit=1', { authorization: `Bearer ${key}` })
  const admin = probe(adminPort, '/healthz', {})
  await new Promise((r) => setTimeout(r, 1000)) // warm-up
  const quietFrom = performance.now()
  await new Promise((r) => setTimeout(r, SECONDS * 1000))
  const quietTo = performance.now()

  // A made-up key of the right shape (prefix, length), which no storage knows.
  const madeUp = `as_live_${'x'.repeat(32)}`
  say(`flooding for ${SECONDS} s with ${options.connections} connections`)
  const cpuBefore = cpuSeconds(server.pid)
  const floodFrom = performance.now()
  const floodFromUs = Number(process.hrtime.bigint() / 1000n)
  const wrk = await run(
    'taskset',
    [
      '-c',
      '0',
      'wrk',
      '-t1',
      `-c${options.connections}`,
      `-d${SECONDS}s`,
      '-H',
      `Authorization: Bearer ${madeUp}`,
      `http://127.0.0.1:${port}/v1/pets`,
    ],
    { timeoutMs: (SECONDS + 30) * 1000 },
  )
  const floodTo = performance.now()
  const floodToUs = Number(process.hrtime.bigint() / 1000n)
  const cpu = cpuSeconds(server.pid) - cpuBefore
  await main.stop()
  await admin.stop()
  const requests = Number(/(\d+) requests in/.exec(wrk.stdout)?.[1])
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(wrk.stdout)?.[1] ?? 0)
  const report = {
    dist: options.dist,
    seconds: SECONDS,
    connections: Number(options.connections),
    loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    flood: { requests, refused: non2xx, perSecond: Math.round(requests / ((floodTo - floodFrom) / 1000)) },
    serverCpuSeconds: Math.round(cpu * 100) / 100,
    cpuMicrosecondsPerRefusal: Math.round((cpu / requests) * 1e7) / 10,
    quiet: { main: stats(main.between(quietFrom, quietTo)), admin: stats(admin.between(quietFrom, quietTo)) },
    underFlood: { main: stats(main.between(floodFrom, floodTo)), admin: stats(admin.between(floodFrom, floodTo)) },
  }
  await stop(server)
  if (profileDir !== undefined) {
    const file = readdirSync(profileDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort()
      .at(-1)
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8'))
    report.profile = {
      file: join(profileDir, file),
      ...summariseProfile(profile, { root: ROOT, top: 30, fromUs: floodFromUs, toUs: floodToUs }),
    }
  }
  process.stdout.write(`${JSON.stringify(report, null, 1)}\n`)
} finally {
  await shutdown()
}
