#!/usr/bin/env node
// Instructions per request, counted by valgrind (callgrind), for an A/B of the request path on a
// machine that is not quiet. wrk's req/s and the CPU µs/req of bench/run.mjs move with whatever
// else runs (another build, a test suite, a neighbour VM): a same-day A/B needs the machine to
// itself. Callgrind counts the instructions the server executes (and, with --cache-sim, the cache
// misses of a simulated cache): the same for the same binary and inputs, whatever else runs, so two
// builds can be compared while the machine is busy. It does not replace a timed benchmark (it
// misses real cache and branch behaviour, syscalls' cost in the kernel, and parallelism), it bounds
// what code changes cost.
//
//   node bench/instructions.mjs --dist /path/to/old/dist --dist dist [--path /v1/pets?limit=20]
//     [--warm 4000] [--measure 4000] [--runs 2] [--cache-sim]
//
// For each build (interleaved, --runs times): a fresh SQLite file with an Enterprise key far above
// the load, 30 pets, `valgrind --tool=callgrind --instr-atstart=no node <dist>/server.js`; the
// warm-up runs uninstrumented (so the JIT reaches its steady state at near-native speed), then
// instrumentation is switched on, the counters zeroed, --measure requests sent (8 at a time,
// keep-alive) and the counters dumped. Printed: events per request of each run.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, waitHealthy } from '../tools/http.mjs'
import { start } from './lib/children.mjs'

const { values } = parseArgs({
  options: {
    dist: { type: 'string', multiple: true, default: ['dist'] },
    path: { type: 'string', default: '/v1/pets?limit=20' },
    warm: { type: 'string', default: '4000' },
    measure: { type: 'string', default: '4000' },
    runs: { type: 'string', default: '2' },
    'cache-sim': { type: 'boolean', default: false },
  },
})
const dists = values.dist.map((d) => resolve(d))
const measure = Number(values.measure)

/** `count` requests, `concurrency` at a time on keep-alive connections; throws on any non-2xx. */
async function load(port, key, count, method, path, concurrency = 8) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  let sent = 0
  const one = () =>
    new Promise((done, fail) => {
      const body = method === 'POST' ? JSON.stringify({ name: `pet ${sent}`, categoryId: 1 }) : undefined
      const headers = { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }
      const req = http.request({ host: '127.0.0.1', port, path, method, agent, headers }, (res) => {
        res.resume()
        res.on('end', () => (res.statusCode < 300 ? done() : fail(new Error(`${method} ${path}: ${res.statusCode}`))))
      })
      req.on('error', fail)
      req.end(body)
    })
  const worker = async () => {
    while (sent < count) {
      sent++
      await one()
    }
  }
  try {
    await Promise.all(Array.from({ length: concurrency }, worker))
  } finally {
    agent.destroy()
  }
}

/** callgrind_control's pipe name includes $HOST and $USER: it must see what the server's valgrind saw. */
const control = (pid, ...args) => {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { env: { ...process.env, HOST: '127.0.0.1' }, encoding: 'utf8' })
  if (r.status !== 0 || /error/i.test(r.stdout + r.stderr)) throw new Error(`callgrind_control ${args.join(' ')}: ${r.stdout}${r.stderr}`)
}

async function countOne(dist) {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-instructions-'))
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'store.db')}`, NODE_ENV: 'production' }
  delete env.NODE_OPTIONS
  delete env.NODE_V8_COVERAGE
  delete env.REDIS_URL
  try {
    const created = spawnSync(
      process.execPath,
      [
        join(dist, 'cli.js'),
        'keys',
        'create',
        '--plan',
        'enterprise',
        '--per-minute',
        '1000000000',
        '--per-day',
        '1000000000',
        '--name',
        'bench',
        '--json',
      ],
      { env, encoding: 'utf8' },
    )
    if (created.status !== 0) throw new Error(`keys create: ${created.stderr}`)
    const { key } = JSON.parse(created.stdout)
    const port = await freePort()
    const serverEnv = {
      ...env,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: '0',
      BOOTSTRAP_KEY: 'false',
      LOG_LEVEL: 'info',
      LOG_FILE: join(dir, 'server.log'),
      DURABILITY: 'process',
      // The service's periodic work (polls, flushes, snapshots, sweeps) at its longest: under valgrind
      // a run takes minutes, so timers would add work per request in proportion to the run's wall
      // time, which the machine's load sets (a first version of this script measured ±30% that way).
      KEY_REFRESH_MS: '60000',
      LAST_USED_FLUSH_MS: '600000',
      USAGE_FLUSH_MS: '60000',
      ORDER_SWEEP_MS: '600000',
      LIMITER_SNAPSHOT_MS: '600000',
      // And the connection timeouts: a request under valgrind on a loaded machine may take seconds.
      REQUEST_TIMEOUT_MS: '600000',
      HEADERS_TIMEOUT_MS: '600000',
      KEEP_ALIVE_TIMEOUT_MS: '600000',
    }
    const tool = [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      '--dump-instr=no',
      `--callgrind-out-file=${join(dir, 'cg.%p')}`,
    ]
    if (values['cache-sim']) tool.push('--cache-sim=yes')
    const child = start('valgrind', [...tool, process.execPath, join(dist, 'server.js')], { env: serverEnv })
    try {
      await waitHealthy(port, child, { timeoutMs: 120_000 })
      await load(port, key, 30, 'POST', '/v1/pets')
      await load(port, key, Number(values.warm), 'GET', values.path)
      control(child.pid, '--instr=on')
      control(child.pid, '--zero')
      await load(port, key, measure, 'GET', values.path)
      control(child.pid, '--dump')
    } finally {
      child.kill('SIGINT')
      await child.exited
    }
    const dump = readdirSync(dir).find((f) => /^cg\.\d+\.1$/.test(f))
    if (dump === undefined) throw new Error('no callgrind dump')
    const text = readFileSync(join(dir, dump), 'utf8')
    const events = /^events: (.*)$/m.exec(text)[1].split(' ')
    const summary = /^summary: (.*)$/m.exec(text)[1].split(' ').map(Number)
    return Object.fromEntries(events.map((e, i) => [e, Math.round(summary[i] / measure)]))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const results = dists.map(() => [])
for (let run = 0; run < Number(values.runs); run++) {
  for (const [i, dist] of dists.entries()) {
    const perRequest = await countOne(dist)
    results[i].push(perRequest)
    process.stdout.write(
      `${dist} run ${run + 1}: ${Object.entries(perRequest)
        .map(([e, n]) => `${e} ${n}`)
        .join(', ')} per request\n`,
    )
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const [i, dist] of dists.entries()) {
  const ir = median(results[i].map((r) => r.Ir))
  const base = median(results[0].map((r) => r.Ir))
  process.stdout.write(
    `${dist}: median Ir ${ir} per request${i === 0 ? '' : ` (${(((ir - base) / base) * 100).toFixed(1)}% against the first)`}\n`,
  )
}
