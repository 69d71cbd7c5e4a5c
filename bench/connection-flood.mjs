#!/usr/bin/env node
/**
 * One address floods a listener with slow connections; how many new connections of another
 * address fail meanwhile? The figure behind the per-address connection share (docs/limits.md).
 *
 *   npm run build && node bench/connection-flood.mjs
 *   FLOOD=12000 PROBES=1000 FLOOD_SECONDS=30 SERVER_ENV='{"MAX_CONNECTIONS_PER_ADDRESS":"256"}' node bench/connection-flood.mjs
 *
 * For each listener (main, then admin): the built server (dist/server.js, default settings unless
 * SERVER_ENV says otherwise, on free 127.0.0.1 ports and a temp SQLite file) and, in a process of
 * its own, tools/hostile-clients.mjs holding FLOOD connections of KIND (default idle: they
 * send nothing) from 127.0.0.2 (each one the server closes is opened again). Once the flood holds
 * what it can (its connected sockets steady over 4 reports a second apart, after at least WARMUP_SECONDS), PROBES new connections from
 * 127.0.0.1, CONCURRENCY at a time, each one GET /healthz; a probe fails when it gets no 200
 * within 5 s (reset, closed, timed out). Prints one JSON line per listener. Bounded: every
 * process stops after FLOOD_SECONDS. Needs `ulimit -n` above FLOOD + 100 (the hostile process)
 * and above MAX_CONNECTIONS (the server).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, waitHealthy } from '../tools/http.mjs'
import { serviceEnv } from '../tools/service-env.mjs'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const number = (name, fallback) => Number(process.env[name] ?? fallback)
const FLOOD = number('FLOOD', 12_000)
/** `idle` (connect, send nothing) or `slowloris` (a header line a second): see hostile-clients.mjs. */
const KIND = process.env.KIND ?? 'idle'
const PROBES = number('PROBES', 1_000)
const CONCURRENCY = number('CONCURRENCY', 10)
const WARMUP_SECONDS = number('WARMUP_SECONDS', 8)
/** The longest wait, after WARMUP_SECONDS, for the flood to hold its connections. */
const MAX_RAMP_SECONDS = number('MAX_RAMP_SECONDS', 90)
const FLOOD_SECONDS = number('FLOOD_SECONDS', 240)
const SERVER_ENV = JSON.parse(process.env.SERVER_ENV ?? '{}')
const ATTACKER = '127.0.0.2'
const CLIENT = '127.0.0.1'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** One GET /healthz on a new connection from CLIENT: 'ok' or why not. */
function probe(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false, localAddress: CLIENT, timeout: 5000 }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode === 200 ? 'ok' : `status ${res.statusCode}`))
      res.once('error', (error) => resolve(error.code ?? error.message))
    })
    req.once('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })))
    req.once('error', (error) => resolve(error.code ?? error.message))
  })
}

async function probeAll(port) {
  const outcomes = {}
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < PROBES) {
        next++
        const outcome = await probe(port)
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
      }
    }),
  )
  return { outcomes, ms: Math.round(performance.now() - started) }
}

async function measure(listener) {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-flood-'))
  const [port, adminPort] = [await freePort(), await freePort()]
  const server = spawn(process.execPath, [join(ROOT, 'dist', 'server.js')], {
    env: serviceEnv({
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      DATABASE_URL: join(dir, 'store.db'),
      LOG_FILE: join(dir, 'server.log'),
      LOG_LEVEL: 'warn',
      BOOTSTRAP_KEY: 'false',
      ...SERVER_ENV,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  server.stdout.setEncoding('utf8').on('data', (s) => (out += s))
  server.stderr.setEncoding('utf8').on('data', (s) => (err += s))
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })))
  const target = listener === 'main' ? port : adminPort
  let hostile
  try {
    await waitHealthy(port, {
      exited,
      get err() {
        return err
      },
      get out() {
        return out
      },
    })
    hostile = spawn(process.execPath, [join(ROOT, 'tools', 'hostile-clients.mjs')], {
      env: { ...process.env, HOSTILE: JSON.stringify({ port: target, from: ATTACKER, [KIND]: FLOOD, maxSeconds: FLOOD_SECONDS }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let last = {}
    const reports = []
    hostile.stdout.setEncoding('utf8').on('data', (s) => {
      for (const line of s.split('\n')) {
        if (!line.startsWith('{')) continue
        last = JSON.parse(line)
        reports.push(last.connected)
      }
    })
    // Until the flood holds what it can: connected sockets steady for 3 s (a listener takes a
    // burst of connections only as fast as its accept queue lets the SYNs through).
    await sleep(WARMUP_SECONDS * 1000)
    const steady = () => {
      const [a, b, c, d] = reports.slice(-4)
      return d > 0 && [a, b, c].every((n) => Math.abs(n - d) <= Math.max(2, d / 100))
    }
    const rampEnd = performance.now() + MAX_RAMP_SECONDS * 1000
    while (!steady() && performance.now() < rampEnd) await sleep(500)
    const before = last
    const { outcomes, ms } = await probeAll(target)
    const after = last
    const failed = PROBES - (outcomes.ok ?? 0)
    return {
      listener,
      flood: FLOOD,
      kind: KIND,
      from: ATTACKER,
      serverEnv: SERVER_ENV,
      probes: PROBES,
      failed,
      failedPercent: Math.round((failed / PROBES) * 1000) / 10,
      outcomes,
      probeMs: ms,
      attackerConnected: { before: before.connected, after: after.connected },
      attackerReopened: (after[`${KIND}Opened`] ?? 0) - (before[`${KIND}Opened`] ?? 0),
    }
  } finally {
    hostile?.kill('SIGKILL')
    server.kill('SIGKILL')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
}

for (const listener of ['main', 'admin']) process.stdout.write(`${JSON.stringify(await measure(listener))}\n`)
