/**
 * The shipped deploy/haproxy.cfg keeps each client address's share of connections (256 at once,
 * as an instance's MAX_CONNECTIONS_PER_ADDRESS): behind it, an instance sees only the balancer's
 * address, which TRUST_PROXY exempts from the instance's own share (docs/deployment.md). A throwaway
 * HAProxy runs the file unchanged; the frontend's rule holds whether or not an instance is up, so
 * none is started (each request is then HAProxy's own 503, which still shows the connection was
 * taken). One address (127.0.0.2) opens 256 + 20 idle connections; 20 are closed at once, and
 * another address (127.0.0.3) is still answered. And each IPv6 /48 holds 4096 at once, however
 * many /64s it uses: 17 /64s of one /48 in a network namespace open 256 each, the last 256 are
 * closed, and a client of another /48 is answered.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import http from 'node:http'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { requireThrowaway } from '../helpers/faults.js'
import { openIdleConnections } from '../helpers/idle-connections.js'
import { useNamespace } from '../helpers/netns.js'
import { freePort, ROOT, waitFor } from '../helpers/process.js'
import { startThrowawayHaproxy } from '../helpers/proxies.js'

const SHARE = 256
const OVER = 20
/** What one IPv6 /48 may hold at once, its /64s together. */
const SITE = 4096
const BOUND_MS = 20_000

function status(port: number, from: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/readyz', agent: false, localAddress: from, timeout: 10_000 }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
    })
    req.once('timeout', () => req.destroy())
    req.once('error', () => resolve(0))
  })
}

// Issue 32: the config listed exactly three servers, so with two `haproxy -c` failed; any count from one to nine now.
for (const count of [1, 2, 3]) {
  test(`deploy/haproxy.cfg is valid (haproxy -c) with ${count} server(s)`, async (t) => {
    if (!requireThrowaway(t, 'HAProxy')) return
    const env = {
      ...process.env,
      AS_BIND: '127.0.0.1:8080',
      ...Object.fromEntries(Array.from({ length: count }, (_, i) => [`AS_SERVER_${i + 1}`, `127.0.0.1:${8081 + i}`])),
      AS_STATS_SOCKET: '/run/animal-store-haproxy-check.sock',
    }
    const { stdout } = await promisify(execFile)('haproxy', ['-c', '-f', join(ROOT, 'deploy/haproxy.cfg')], { env })
    assert.match(stdout, /Configuration file is valid/)
  })
}

test(`deploy/haproxy.cfg: one address holds ${SHARE} connections at once, those over it are closed; another address is answered`, {
  timeout: 90_000,
}, async (t) => {
  if (!requireThrowaway(t, 'HAProxy')) return
  // Nothing listens on these: the instances are down, which the frontend's rule does not depend on.
  const servers = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`] as const
  const haproxy = await startThrowawayHaproxy(t, [...servers])
  const port = Number(new URL(haproxy.url).port)

  const { closed } = await openIdleConnections(t, port, '127.0.0.2', SHARE + OVER, 32)
  assert.ok(await waitFor(() => closed() === OVER, BOUND_MS), `${OVER} over the share are closed (closed: ${closed()})`)
  assert.equal(await status(port, '127.0.0.3'), 503, "another address's request reaches the (empty) backend")
  assert.equal(closed(), OVER, 'the share stays open')
})

/**
 * A script for Namespace.node: from each address of argv[1] (a JSON array), argv[2] idle
 * connections to [argv[3]]:argv[4], one at a time; a second after the last, one GET /readyz from
 * argv[5]. Prints {closed, status}: how many of the idle connections the far end closed, and the
 * request's status (0: its connection was closed).
 */
const SITE_SCRIPT = `
const net = require('node:net')
const http = require('node:http')
const [sources, each, host, port, probeFrom] = [JSON.parse(process.argv[1]), Number(process.argv[2]), process.argv[3], Number(process.argv[4]), process.argv[5]]
let closed = 0
const sockets = []
const open = (from) => new Promise((resolve, reject) => {
  const socket = net.connect({ host, port, localAddress: from })
  sockets.push(socket)
  socket.on('error', (error) => { if (!socket.connecting || error.code === 'ECONNRESET') return; reject(error) })
  socket.once('close', () => { closed++; resolve() })
  socket.once('end', () => socket.destroy())
  socket.once('connect', resolve)
})
;(async () => {
  for (const from of sources) for (let i = 0; i < each; i++) await open(from)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const status = await new Promise((resolve) => {
    const req = http.get({ host, port, path: '/readyz', agent: false, localAddress: probeFrom, timeout: 10000 }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode))
    })
    req.once('timeout', () => req.destroy())
    req.once('error', () => resolve(0))
  })
  process.stdout.write(JSON.stringify({ closed, status }))
  for (const socket of sockets) socket.destroy()
})()
`

test(`deploy/haproxy.cfg: the /64s of one IPv6 /48 hold ${SITE} connections at once together, those over it are closed; another /48 is answered`, {
  timeout: 120_000,
}, async (t) => {
  if (!requireThrowaway(t, 'HAProxy')) return
  const subnets = SITE / SHARE + 1
  const ns = useNamespace(t, { ipv6Subnets: subnets })
  if (ns?.ipv6 === undefined) return
  const haproxy = await startThrowawayHaproxy(t, [`127.0.0.1:${await freePort()}`], { everyAddress: true })
  const port = new URL(haproxy.url).port
  // Each /64 within its own share of 256: only the /48's bound closes any.
  const out = await ns.node(SITE_SCRIPT, [
    JSON.stringify(ns.ipv6.subnetAddresses),
    String(SHARE),
    ns.ipv6.hostAddress,
    port,
    ns.ipv6.otherSiteAddress,
  ])
  assert.deepEqual(JSON.parse(out), { closed: subnets * SHARE - SITE, status: 503 })
})
