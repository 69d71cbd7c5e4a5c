#!/usr/bin/env node
// What keyless client addresses cost the limiter: the built server (dist/server.js, or --dist DIR)
// behind TRUST_PROXY=127.0.0.1 gets one keyless request from each of N distinct addresses
// (X-Forwarded-For), then the growth of its memory, the state file and, with --redis, the bytes per
// address in a throwaway redis-server of its own (never a shared one). Loopback only, bounded
// (at most --addresses requests per phase, a hard deadline); every child is stopped at the end.
//
//   node bench/limiter-memory.mjs [--addresses 100000] [--dist dist] [--redis] [--max-addresses N]
//                                 [--node-flags '--max-old-space-size=128']
//
// --max-addresses sets LIMITER_MAX_ADDRESSES (left unset: the service's default). --node-flags are
// given to the server's node before the service's own heap bound (see below). Not part of `npm run
// bench`; the figures go to stdout, one JSON line per phase plus a summary. RSS is read from /proc:
// its peak (VmHWM) over the flood, and after it and after a restart once a full GC has run.
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, waitHealthy } from '../tools/http.mjs'
import { readMemory } from '../tools/proc.mjs'
import { installGuards, onCleanup, run, shutdown, start, stop } from './lib/children.mjs'
import { ROOT } from './lib/service.mjs'

// The inspector's WebSocket: built into Node 22, behind a flag in Node 20.
if (typeof WebSocket === 'undefined') {
  const { spawnSync } = await import('node:child_process')
  const again = spawnSync(process.execPath, ['--experimental-websocket', ...process.argv.slice(1)], { stdio: 'inherit' })
  process.exit(again.status ?? 1)
}

const { values: options } = parseArgs({
  options: {
    addresses: { type: 'string', default: '100000' },
    dist: { type: 'string', default: 'dist' },
    redis: { type: 'boolean', default: false },
    'max-addresses': { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    'node-flags': { type: 'string', default: '' },
  },
})
const ADDRESSES = Number(options.addresses)
const DIST = resolve(ROOT, options.dist)
const CONCURRENCY = Number(options.concurrency)

installGuards(10 * 60_000)
const dir = mkdtempSync(join(tmpdir(), 'limiter-memory-'))
onCleanup(() => rmSync(dir, { recursive: true, force: true }))

const say = (what) => process.stderr.write(`limiter-memory: ${what}\n`)
const mb = (bytes) => Math.round(bytes / 1e5) / 10

/** The i-th address of a run: 10.0.0.0/8, then 11.0.0.0/8, ... (distinct for i < 2^24 per phase). */
const address = (phase, i) => `${10 + phase}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

async function startRedis() {
  const port = await freePort()
  const child = start('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
  for (let i = 0; i < 100; i++) {
    const r = await run('redis-cli', ['-p', String(port), 'ping'], { timeoutMs: 2000 })
    if (r.stdout.trim() === 'PONG') return { child, port }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('redis-server did not answer')
}

async function redisInfo(port) {
  const used = (await run('redis-cli', ['-p', String(port), 'info', 'memory'])).stdout
  const keys = (await run('redis-cli', ['-p', String(port), 'dbsize'])).stdout
  return { usedMemory: Number(/used_memory:(\d+)/.exec(used)?.[1]), keys: Number(keys.trim()) }
}

async function startServer(env) {
  const port = await freePort()
  const adminPort = await freePort()
  const inspectPort = await freePort()
  const flags = options['node-flags'].split(' ').filter(Boolean)
  const child = start(process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, ...flags, join(DIST, 'server.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ANIMAL_STORE_CONFIG_FILE: 'off',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      LOG_LEVEL: 'warn',
      BOOTSTRAP_KEY: 'false',
      TRUST_PROXY: '127.0.0.1',
      ...env,
    },
  })
  const startedAt = performance.now()
  await waitHealthy(port, child)
  const startMs = performance.now() - startedAt
  return { child, port, adminPort, startMs, inspector: await inspector(inspectPort) }
}

/** The server's inspector: evaluate(expression) after a full garbage collection. */
async function inspector(port) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()
  const socket = new WebSocket(target.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => {
    socket.onopen = resolve
    socket.onerror = reject
  })
  let seq = 0
  const pending = new Map()
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data)
    pending.get(message.id)?.(message.result)
    pending.delete(message.id)
  }
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++seq
      pending.set(id, resolve)
      socket.send(JSON.stringify({ id, method, params }))
    })
  return {
    async heapUsedAfterGc() {
      await call('HeapProfiler.collectGarbage')
      await call('HeapProfiler.collectGarbage')
      const r = await call('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true })
      return r.result.value
    },
    /** V8's heap bound (heap_size_limit: the old space's and the young generation's together). */
    async heapStatistics() {
      // The inspector's command line API has `require`, which the ES module's global scope has not.
      const expression = "require('node:v8').getHeapStatistics().heap_size_limit"
      const r = await call('Runtime.evaluate', { expression, includeCommandLineAPI: true, returnByValue: true })
      return { heapLimit: r.result.value }
    },
    close: () => socket.close(),
  }
}

/** One keyless GET /v1/pets per address from `from` to `to` (exclusive), `CONCURRENCY` at a time. */
async function flood(port, phase, from, to) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const statuses = {}
  let next = from
  const worker = async () => {
    while (next < to) {
      const i = next++
      const status = await new Promise((resolve, reject) => {
        const req = http.get(
          { host: '127.0.0.1', port, path: '/v1/pets', agent, headers: { 'x-forwarded-for': address(phase, i) } },
          (res) => {
            res.resume()
            res.on('end', () => resolve(res.statusCode))
          },
        )
        req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')))
        req.on('error', reject)
      })
      statuses[status] = (statuses[status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  agent.destroy()
  return statuses
}

/**
 * V8's used heap after a full GC (through the inspector), then RSS (from /proc), after the state
 * file's next write; and the peak RSS so far (VmHWM), read before that GC.
 */
async function sample(server) {
  await new Promise((r) => setTimeout(r, 2500))
  const peak = readMemory(server.child.pid).hwmKb * 1024
  const heapUsed = await server.inspector.heapUsedAfterGc()
  const { heapLimit } = await server.inspector.heapStatistics()
  return { rss: readMemory(server.child.pid).rssKb * 1024, peak, heapUsed, heapLimit }
}

const env = {}
if (options['max-addresses'] !== undefined) env.LIMITER_MAX_ADDRESSES = options['max-addresses']
const report = {
  dist: options.dist,
  addresses: ADDRESSES,
  limiterMaxAddresses: options['max-addresses'] ?? 'default',
  nodeFlags: options['node-flags'],
}
try {
  let redis
  if (options.redis) {
    redis = await startRedis()
    env.REDIS_URL = `redis://127.0.0.1:${redis.port}`
  } else {
    env.DATABASE_URL = join(dir, 'store.db')
    env.LIMITER_SNAPSHOT_MS = '1000'
  }
  env.DATABASE_URL ??= join(dir, 'store.db')
  const server = await startServer(env)
  say(`server up (pid ${server.child.pid}); warming up`)
  await flood(server.port, 0, 0, 2000)
  const before = await sample(server)
  const redisBefore = redis ? await redisInfo(redis.port) : undefined
  say(`sending one keyless request from each of ${ADDRESSES} addresses`)
  const startedAt = performance.now()
  const statuses = await flood(server.port, 1, 0, ADDRESSES)
  const seconds = (performance.now() - startedAt) / 1000
  const after = await sample(server)
  Object.assign(report, {
    statuses,
    heapLimitMb: mb(after.heapLimit),
    rssAfterWarmupMb: mb(before.rss),
    rssPeakMb: mb(after.peak),
    rssAfterFloodMb: mb(after.rss),
    requestsPerSecond: Math.round(ADDRESSES / seconds),
    rssGrowthMb: mb(after.rss - before.rss),
    heapGrowthMb: mb(after.heapUsed - before.heapUsed),
    rssGrowthMbPer100k: mb(((after.rss - before.rss) / ADDRESSES) * 100_000),
    heapGrowthMbPer100k: mb(((after.heapUsed - before.heapUsed) / ADDRESSES) * 100_000),
  })
  if (redis) {
    const redisAfter = await redisInfo(redis.port)
    Object.assign(report, {
      redisKeys: redisAfter.keys - redisBefore.keys,
      redisBytesPerAddress: Math.round((redisAfter.usedMemory - redisBefore.usedMemory) / ADDRESSES),
      redisGrowthMb: mb(redisAfter.usedMemory - redisBefore.usedMemory),
    })
  } else {
    const file = `${env.DATABASE_URL}.limits.json`
    server.inspector.close()
    await stop(server.child)
    Object.assign(report, { stateFileMb: mb(statSync(file).size) })
    const restarted = await startServer(env)
    const reloaded = await sample(restarted)
    restarted.inspector.close()
    Object.assign(report, {
      restartToHealthyMs: Math.round(restarted.startMs),
      rssAfterReloadMb: mb(reloaded.rss),
      rssPeakOfReloadMb: mb(reloaded.peak),
      heapAfterReloadMb: mb(reloaded.heapUsed),
      heapAfterWarmupMb: mb(before.heapUsed),
    })
  }
  server.inspector.close()
  process.stdout.write(`${JSON.stringify(report)}\n`)
} finally {
  await shutdown()
}
