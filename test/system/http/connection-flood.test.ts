/**
 * One client cannot take the connections of a listener from the others (issue 28): a real server
 * process, one address (127.0.0.2) opening more idle connections than the whole listener allows,
 * another address (127.0.0.1) connecting meanwhile. Before the per-address share, the flood held
 * every place (MAX_CONNECTIONS) and every other client's new connection was closed as soon as it
 * was accepted; the admin listener, open to any local user, the same.
 *
 * Nor can a few addresses together: each within its share, six of them filled the listener, and
 * every other client's new connection was refused again (60 addresses at the default sizes). A
 * full listener now closes an idle connection of the site holding the most for a site holding
 * fewer: an IPv4 address, an IPv6 /48 (its /64s together, tested in a network namespace).
 *
 * Small numbers (MAX_CONNECTIONS 100, ADMIN_MAX_CONNECTIONS 30, a share of 20) and long timeouts,
 * so the idle connections stay for the whole test: a connection is closed by the server only when
 * refused or when another takes its place, which is what is counted. The figures at the default
 * sizes (12,000 connections against 10,000 places) are measured by bench/connection-flood.mjs
 * (docs/limits.md).
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { test } from 'node:test'
import { type IdleConnections, openIdleConnections } from '../helpers/idle-connections.js'
import { useNamespace } from '../helpers/netns.js'
import { request, startServer, useTempDir, waitFor } from '../helpers/process.js'

const MAX_CONNECTIONS = 100
const ADMIN_MAX_CONNECTIONS = 30
const SHARE = 20
/** More than the whole main listener allows. */
const FLOOD = 120
const PROBES = 20
const BOUND_MS = 20_000
/** Addresses that fill the main listener together, each within its share, beside 127.0.0.2's. */
const CROWD = ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7']

const closedOf = (clients: IdleConnections[]) => clients.reduce((sum, client) => sum + client.closed(), 0)

/** GET `path` on a new connection from `from`: the status, or 0 when the connection was refused. */
function get(port: number, path: string, from: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, localAddress: from, timeout: 10_000 }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
      res.once('error', () => resolve(0))
    })
    req.once('timeout', () => req.destroy())
    req.once('error', () => resolve(0))
  })
}

async function probes(port: number, path: string): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < PROBES; i++) statuses.push(await get(port, path, '127.0.0.1'))
  return statuses
}

test('one address flooding a listener with idle connections holds only its share: another address is still served, on both listeners', {
  timeout: 120_000,
}, async (t) => {
  const dir = await useTempDir(t, 'animal-store-connection-share-')
  const server = await startServer(t, {
    dir,
    env: {
      MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      ADMIN_MAX_CONNECTIONS: String(ADMIN_MAX_CONNECTIONS),
      MAX_CONNECTIONS_PER_ADDRESS: String(SHARE),
      HEADERS_TIMEOUT_MS: '60000',
      REQUEST_TIMEOUT_MS: '60000',
    },
  })
  const admin = Number(new URL(server.adminUrl).port)

  let attacker: IdleConnections | undefined
  await t.test('main listener', async () => {
    attacker = await openIdleConnections(t, server.port, '127.0.0.2', FLOOD, 20)
    const refused = await waitFor(() => attacker!.closed() === FLOOD - SHARE, BOUND_MS)
    assert.ok(refused, `all but its share of ${SHARE} are closed at once (closed: ${attacker.closed()} of ${FLOOD})`)
    assert.deepEqual(await probes(server.port, '/healthz'), Array(PROBES).fill(200), 'another address is served every time')
    assert.equal(attacker.closed(), FLOOD - SHARE, 'its share stays open')
  })

  // The main listener's connections the server closed beyond 127.0.0.2's refusals over its share.
  let mainTaken = 0
  await t.test('main listener: addresses that fill it together, each within its share, give way to another address', async () => {
    const crowd = await Promise.all(CROWD.map((from) => openIdleConnections(t, server.port, from, SHARE, 20)))
    const taken = () => closedOf([attacker!, ...crowd]) - (FLOOD - SHARE)
    // 20 + 5 x 20 connections for 100 places: 20 closed, refused or for a site holding fewer.
    const full = await waitFor(() => taken() === (CROWD.length + 1) * SHARE - MAX_CONNECTIONS, BOUND_MS)
    assert.ok(full, `the listener is full (closed: ${taken()})`)
    assert.deepEqual(await probes(server.port, '/healthz'), Array(PROBES).fill(200), 'another address is served every time')
    mainTaken = taken()
    assert.ok(mainTaken > 20 && mainTaken <= 20 + PROBES, `idle connections made room for the probes (closed: ${mainTaken})`)
  })

  await t.test('admin listener: the same share, within a budget of its own', async () => {
    const attacker = await openIdleConnections(t, admin, '127.0.0.2', FLOOD, 20)
    assert.ok(await waitFor(() => attacker.closed() === FLOOD - SHARE, BOUND_MS), `closed: ${attacker.closed()} of ${FLOOD}`)
    assert.deepEqual(await probes(admin, '/healthz'), Array(PROBES).fill(200), 'another address is served every time')
    // A third address fills the rest of the admin listener's 30 places (the main listener has 100),
    // then takes 127.0.0.2's places while it holds two fewer: 15 each, 5 of its own refused.
    const third = await openIdleConnections(t, admin, '127.0.0.3', SHARE, 20)
    const shared = await waitFor(() => third.closed() === 5 && attacker.closed() === FLOOD - SHARE + 5, BOUND_MS)
    assert.ok(shared, `15 each (closed: ${third.closed()} of the third's, ${attacker.closed() - (FLOOD - SHARE)} more of the first's)`)
    for (const socket of [...attacker.sockets, ...third.sockets]) socket.destroy()
  })

  await t.test('the refusals and the connections closed for others are counted by listener and reason', async () => {
    let metrics = ''
    // The flood's sockets were destroyed on this side a moment ago; until the server has seen them
    // close, the admin listener is still full, and this read takes the place of one of them
    // (counted as evicted like any other).
    const read = await waitFor(async () => {
      const res = await request(`${server.adminUrl}/metrics`).catch(() => undefined)
      metrics = res?.status === 200 ? res.text : ''
      return metrics !== ''
    }, BOUND_MS)
    assert.ok(read, 'the admin listener serves /metrics')
    const counted = (name: string, labels: string) =>
      Number(new RegExp(`^animal_store_connections_${name}_total\\{${labels}\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0)
    const refused = (listener: string, reason: string) => counted('refused', `listener="${listener}",reason="${reason}"`)
    const evicted = (listener: string) => counted('evicted', `listener="${listener}"`)
    assert.deepEqual(
      {
        mainShare: refused('main', 'per_address'),
        mainFullOrEvicted: refused('main', 'max_connections') + evicted('main'),
        adminShare: refused('admin', 'per_address'),
        adminFull: refused('admin', 'max_connections'),
      },
      { mainShare: FLOOD - SHARE, mainFullOrEvicted: mainTaken, adminShare: FLOOD - SHARE, adminFull: 5 },
    )
    assert.ok(evicted('main') >= 1, `the probes took idle connections' places (evicted: ${evicted('main')})`)
    assert.ok(evicted('admin') >= 5, `the third address took five of the first's places (evicted: ${evicted('admin')})`)
  })
})

/**
 * A script for Namespace.node: from each address of argv[1] (a JSON array), one idle connection
 * to [argv[2]]:argv[3]; once all are open, argv[4] requests GET /healthz one after the other from
 * argv[5], each on a new connection. Prints {statuses, closed}: each request's status (0: its
 * connection was refused), and how many idle connections the server closed.
 */
const CROWD_THEN_PROBE_SCRIPT = `
const net = require('node:net')
const http = require('node:http')
const [sources, host, port, probes, probeFrom] = [JSON.parse(process.argv[1]), process.argv[2], Number(process.argv[3]), Number(process.argv[4]), process.argv[5]]
let closed = 0
const open = (from) => new Promise((resolve, reject) => {
  const socket = net.connect({ host, port, localAddress: from })
  socket.once('connect', () => resolve(socket))
  socket.once('error', reject)
})
const get = () => new Promise((resolve) => {
  const req = http.get({ host, port, path: '/healthz', agent: false, localAddress: probeFrom, timeout: 10000 }, (res) => {
    res.resume()
    res.once('end', () => resolve(res.statusCode))
    res.once('error', () => resolve(0))
  })
  req.once('timeout', () => req.destroy())
  req.once('error', () => resolve(0))
})
;(async () => {
  const sockets = []
  for (const from of sources) sockets.push(await open(from))
  for (const socket of sockets) {
    socket.on('error', () => {})
    socket.once('close', () => closed++)
    socket.once('end', () => socket.destroy())
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  const statuses = []
  for (let i = 0; i < probes; i++) statuses.push(await get())
  await new Promise((resolve) => setTimeout(resolve, 500))
  process.stdout.write(JSON.stringify({ statuses, closed }))
  for (const socket of sockets) socket.destroy()
})()
`

test('IPv6: /64s of one /48, one connection each, fill the listener; a client of another /48 is still served', {
  timeout: 120_000,
}, async (t) => {
  const ns = useNamespace(t, { ipv6Subnets: MAX_CONNECTIONS })
  if (ns?.ipv6 === undefined) return
  const { ipv6 } = ns
  const dir = await useTempDir(t, 'animal-store-connection-share-v6-')
  // Every interface, so that the namespace reaches it over the pair (IPv6) and the harness over loopback.
  const server = await startServer(t, {
    dir,
    env: {
      HOST: '::',
      MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      MAX_CONNECTIONS_PER_ADDRESS: String(SHARE),
      HEADERS_TIMEOUT_MS: '60000',
      REQUEST_TIMEOUT_MS: '60000',
    },
  })
  // Each /64 holds one connection, far within its share: only the /48 as one client tells them apart.
  const out = await ns.node(CROWD_THEN_PROBE_SCRIPT, [
    JSON.stringify(ipv6.subnetAddresses),
    ipv6.hostAddress,
    String(server.port),
    String(PROBES),
    ipv6.otherSiteAddress,
  ])
  const { statuses, closed } = JSON.parse(out) as { statuses: number[]; closed: number }
  assert.deepEqual(statuses, Array(PROBES).fill(200), 'the client of another /48 is served every time')
  assert.ok(closed >= 1 && closed <= PROBES, `idle connections of the crowded /48 made room (closed: ${closed})`)
})
