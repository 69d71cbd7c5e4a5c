#!/usr/bin/env node
/**
 * Addresses flood a listener with slow connections; how many new connections of another address
 * fail meanwhile? The figures behind each client's share of the connections (docs/limits.md).
 *
 *   npm run build && node bench/connection-flood.mjs
 *   FLOOD=12000 PROBES=1000 FLOOD_SECONDS=30 SERVER_ENV='{"MAX_CONNECTIONS_PER_ADDRESS":"256"}' node bench/connection-flood.mjs
 *   ATTACKERS=60 node bench/connection-flood.mjs              # 60 IPv4 addresses: 127.0.0.2 to 127.0.0.61
 *   ATTACKERS=60 FAMILY=6 node bench/connection-flood.mjs     # 60 IPv6 /64s of one /48 (root: a network namespace)
 *
 * For each listener of LISTENERS (default main, then admin): the built server (DIST/server.js,
 * DIST default dist; default settings unless SERVER_ENV says otherwise, on free ports and a temp
 * SQLite file) and, in a process of its own, tools/hostile-clients.mjs holding FLOOD connections
 * of KIND (default idle: they send nothing) spread evenly over ATTACKERS addresses (default 1;
 * each one the server closes is opened again from the same address). Once the flood holds what it
 * can (the server's open sockets steady over 4 readings a second apart, after at least WARMUP_SECONDS),
 * PROBES new connections from another address, CONCURRENCY at a time, each one GET /healthz; a
 * probe fails when it gets no 200 within 5 s (reset, closed, timed out). Prints one JSON line per
 * listener, with the server's RSS after the probes and at its peak. SERVER_ENV may hold node's
 * own flags too (`"NODE_OPTIONS":"--max-old-space-size=192"`).
 *
 * PROXY=haproxy: HAProxy with deploy/haproxy.cfg unchanged in front of the server's main listener
 * (TRUST_PROXY=127.0.0.1), which the flood and the probes reach instead; its maxconn is what its
 * file descriptor limit allows (about half of `ulimit -n`). "Open sockets" are then HAProxy's.
 *
 * FAMILY=4 (default): everything on loopback, the attackers from 127.0.0.2 on, the probes from
 * 127.0.0.1. FAMILY=6: the whole run in a network namespace of its own (NETNS, default
 * as-flood-<pid>; deleted at the end), on its loopback interface with ULA addresses under ULA
 * (default fd00:a5, a /32): the attackers from ULA:1:<n>::2 (one /64 each, all in the /48
 * ULA:1::/48), the probes from ULA:2::2 (another /48), the server listening on every address.
 *
 * Bounded: every process stops after FLOOD_SECONDS. Needs `ulimit -n` above FLOOD + 100 (the
 * hostile process) and above MAX_CONNECTIONS (the server).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, waitHealthy } from '../tools/http.mjs'
import { countFds, readMemory } from '../tools/proc.mjs'
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
const DIST = resolve(ROOT, process.env.DIST ?? 'dist')
const LISTENERS = (process.env.LISTENERS ?? 'main,admin').split(',')
const ATTACKERS = number('ATTACKERS', 1)
const FAMILY = number('FAMILY', 4)
const ULA = process.env.ULA ?? 'fd00:a5'
/** `haproxy`: the flood and the probes go through deploy/haproxy.cfg in front of the server (main listener). */
const PROXY = process.env.PROXY

if (FAMILY === 6 && process.env.FLOOD_IN_NETNS === undefined) process.exit(await inNamespace())

/** Where the server is reached, the attackers' addresses and the probes' address. */
const { TARGET, ATTACKER, CLIENT } =
  FAMILY === 6
    ? {
        TARGET: `${ULA}:ffff::1`,
        ATTACKER: Array.from({ length: ATTACKERS }, (_, i) => `${ULA}:1:${(i + 1).toString(16)}::2`),
        CLIENT: `${ULA}:2::2`,
      }
    : {
        TARGET: '127.0.0.1',
        ATTACKER: Array.from({ length: ATTACKERS }, (_, i) => `127.0.0.${i + 2}`),
        CLIENT: '127.0.0.1',
      }

/**
 * Runs this script again inside a network namespace of its own, whose loopback interface holds
 * the run's IPv6 addresses; deletes the namespace after. The exit status of the run.
 */
async function inNamespace() {
  const name = process.env.NETNS ?? `as-flood-${process.pid}`
  const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'inherit'] })
  ip('netns', 'add', name)
  try {
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up')
    const addresses = [
      `${ULA}:ffff::1`,
      `${ULA}:2::2`,
      ...Array.from({ length: ATTACKERS }, (_, i) => `${ULA}:1:${(i + 1).toString(16)}::2`),
    ]
    for (const address of addresses) ip('netns', 'exec', name, 'ip', '-6', 'addr', 'add', `${address}/128`, 'dev', 'lo')
    const child = spawn('ip', ['netns', 'exec', name, process.execPath, ...process.argv.slice(1)], {
      env: { ...process.env, FLOOD_IN_NETNS: name },
      stdio: 'inherit',
    })
    return await new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)))
  } finally {
    ip('netns', 'delete', name)
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** One GET /healthz on a new connection from CLIENT: 'ok' or why not. */
function probe(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: TARGET, port, path: '/healthz', agent: false, localAddress: CLIENT, timeout: 5000 }, (res) => {
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
  const server = spawn(process.execPath, [join(DIST, 'server.js')], {
    env: serviceEnv({
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: FAMILY === 6 ? '::' : '127.0.0.1',
      ...(PROXY === undefined ? {} : { TRUST_PROXY: '127.0.0.1' }),
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
  let target = listener === 'main' ? port : adminPort
  let hostile
  let proxy
  /** Whose open sockets tell that the flood holds what it can: the server's, or the proxy's in front of it. */
  let holder = server
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
    if (PROXY === 'haproxy') {
      target = await freePort()
      proxy = spawn('haproxy', ['-db', '-f', join(ROOT, 'deploy', 'haproxy.cfg')], {
        env: {
          ...process.env,
          AS_BIND: FAMILY === 6 ? `:::${target}` : `127.0.0.1:${target}`,
          AS_SERVER_1: `127.0.0.1:${port}`,
          AS_STATS_SOCKET: join(dir, 'haproxy.sock'),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      })
      holder = proxy
      // Up once its health check has found the server ready: GET /healthz answered by the server through it.
      const proxyExited = new Promise((resolve) => proxy.once('exit', (code, signal) => resolve({ code, signal })))
      await waitHealthy(target, { exited: proxyExited, err: '', out: '' }, { timeoutMs: 30_000 })
    }
    hostile = spawn(process.execPath, [join(ROOT, 'tools', 'hostile-clients.mjs')], {
      env: {
        ...process.env,
        HOSTILE: JSON.stringify({ port: target, host: TARGET, from: ATTACKER, [KIND]: FLOOD, maxSeconds: FLOOD_SECONDS }),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let last = {}
    hostile.stdout.setEncoding('utf8').on('data', (s) => {
      for (const line of s.split('\n')) {
        if (line.startsWith('{')) last = JSON.parse(line)
      }
    })
    // Until the flood holds what it can: the server's open sockets steady over 4 readings a second
    // apart. Not the flood's own count: a connection is established on the client's side once the
    // kernel answers its SYN, while the server may not have accepted it yet (its accept queue
    // full), and then it holds no place.
    const serverSockets = []
    const sample = setInterval(() => serverSockets.push(countFds(holder.pid).sockets), 1000)
    await sleep(WARMUP_SECONDS * 1000)
    const steady = () => {
      const [a, b, c, d] = serverSockets.slice(-4)
      return d > 0 && [a, b, c].every((n) => Math.abs(n - d) <= Math.max(2, d / 100))
    }
    const rampEnd = performance.now() + MAX_RAMP_SECONDS * 1000
    while (!steady() && performance.now() < rampEnd) await sleep(500)
    const before = { ...last, serverSockets: serverSockets.at(-1) }
    const { outcomes, ms } = await probeAll(target)
    clearInterval(sample)
    const after = { ...last, serverSockets: countFds(holder.pid).sockets }
    const memory = readMemory(server.pid)
    const failed = PROBES - (outcomes.ok ?? 0)
    return {
      listener,
      flood: FLOOD,
      kind: KIND,
      family: FAMILY,
      attackers: ATTACKER.length,
      from: ATTACKER.length === 1 ? ATTACKER[0] : `${ATTACKER[0]} .. ${ATTACKER.at(-1)}`,
      client: CLIENT,
      dist: process.env.DIST ?? 'dist',
      serverEnv: SERVER_ENV,
      probes: PROBES,
      failed,
      failedPercent: Math.round((failed / PROBES) * 1000) / 10,
      outcomes,
      probeMs: ms,
      proxy: PROXY,
      serverSockets: { before: before.serverSockets, after: after.serverSockets },
      serverRssMb: { after: Math.round(memory.rssKb / 1024), peak: Math.round(memory.hwmKb / 1024) },
      attackerConnected: { before: before.connected, after: after.connected },
      attackerReopened: (after[`${KIND}Opened`] ?? 0) - (before[`${KIND}Opened`] ?? 0),
    }
  } finally {
    hostile?.kill('SIGKILL')
    proxy?.kill('SIGKILL')
    server.kill('SIGKILL')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
}

for (const listener of LISTENERS) process.stdout.write(`${JSON.stringify(await measure(listener))}\n`)
