/**
 * Each client's share of a listener's connections (src/http/connection-share.ts), over real
 * sockets from loopback addresses (127.0.0.2 holding many, 127.0.0.1 or 127.0.0.3 the others),
 * against a plain node:http server: one client holds at most its share, a connection over it is
 * closed at once, a closed one frees its place, another client still gets in, and an exempt peer
 * has no share; a full listener makes room for a site holding fewer by closing the longest idle
 * connection of the site holding the most, never one with a request in flight, and refuses a site
 * holding about as many; a connection pipelining more than MAX_PIPELINED unanswered requests is
 * closed. The whole service over real sockets: test/system/http/connection-flood.test.ts.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { type TestContext, test } from 'node:test'
import { MAX_PIPELINED, shareConnections, trustedPeer } from '../../src/http/connection-share.js'
import { waitFor } from '../helpers/wait.js'

const SHARE = 5
const BOUND_MS = 15_000

interface Listener {
  port: number
  /** Connections refused at once, by reason. */
  refused(reason?: 'per_address' | 'max_connections' | 'pipelining'): number
  /** Idle connections closed for another site's place. */
  evicted(): number
}

interface ListenOptions {
  capacity?: number
  exempt?: (address: string) => boolean
  clientOf?: (address: string) => string
  siteOf?: (address: string) => string
  handler?: http.RequestListener
}

async function listen(t: TestContext, options: ListenOptions = {}): Promise<Listener> {
  const server = http.createServer(options.handler ?? ((_req, res) => res.end('ok')))
  const refused = { per_address: 0, max_connections: 0, pipelining: 0 }
  let evicted = 0
  shareConnections(server, {
    perClient: SHARE,
    capacity: options.capacity ?? 1_000,
    clientOf: options.clientOf ?? ((address) => address),
    siteOf: options.siteOf ?? ((address) => address),
    exempt: options.exempt ?? (() => false),
    onRefused: (reason) => refused[reason]++,
    onEvicted: () => evicted++,
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    port: (server.address() as net.AddressInfo).port,
    refused: (reason) => (reason === undefined ? refused.per_address + refused.max_connections : refused[reason]),
    evicted: () => evicted,
  }
}

interface Held {
  sockets: net.Socket[]
  /** How many the server has closed so far. */
  closed(): number
  /** Which of `sockets` (by index, in the order they connected) the server has closed. */
  closedIndexes(): number[]
}

/**
 * `count` idle connections from `from`, once each is connected; one at a time with `inOrder`, so
 * that the server accepts them in that order.
 */
async function connect(t: TestContext, port: number, from: string, count: number, { inOrder = false } = {}): Promise<Held> {
  const closed = new Set<number>()
  let opened = 0
  const open = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const index = opened++
      const socket = net.connect({ port, host: '127.0.0.1', localAddress: from })
      // A connection refused at once can be reset before this side has seen its connect: it was
      // accepted and closed all the same.
      const early = (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ECONNRESET') return reject(error)
        closed.add(index)
        resolve(socket)
      }
      socket.once('error', early)
      socket.once('connect', () => {
        socket.off('error', early)
        resolve(socket)
      })
    })
  const sockets: net.Socket[] = []
  if (inOrder) for (let i = 0; i < count; i++) sockets.push(await open())
  else sockets.push(...(await Promise.all(Array.from({ length: count }, open))))
  sockets.forEach((socket, index) => {
    socket.on('error', () => {}) // a reset from the server: its close is what counts
    socket.once('close', () => closed.add(index))
    // The server's FIN: the socket is then closed from this side too.
    socket.once('end', () => socket.destroy())
  })
  t.after(() => {
    for (const socket of sockets) socket.destroy()
  })
  return { sockets, closed: () => closed.size, closedIndexes: () => [...closed].sort((a, b) => a - b) }
}

function get(port: number, from: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', agent: false, localAddress: from }, (res) => {
        res.resume()
        res.once('end', () => resolve(res.statusCode ?? 0))
      })
      .once('error', reject)
  })
}

/** A connection the server accepted, then either answered (the status) or closed (0). */
const getOrRefused = (port: number, from: string) => get(port, from).catch(() => 0)

test('one address holds its share of connections; those over it are closed at once; another address gets in', async (t) => {
  const { port, refused } = await listen(t)
  const flood = await connect(t, port, '127.0.0.2', SHARE + 10)
  assert.ok(await waitFor(() => flood.closed() === 10, BOUND_MS), `10 over the share are closed (closed: ${flood.closed()})`)
  assert.equal(refused(), 10)
  assert.equal(await get(port, '127.0.0.1'), 200, 'another address is answered')
  assert.equal(flood.closed(), 10, 'the share is held: the server closed none of the first five')
})

test('a connection that closes frees its place in the share', async (t) => {
  const { port } = await listen(t)
  const first = await connect(t, port, '127.0.0.2', SHARE)
  assert.equal(await get(port, '127.0.0.2').catch(() => 0), 0, 'the share is full: a sixth is refused')
  first.sockets[0]!.destroy()
  // Once the server has seen it close, a request on a new connection from the address is answered.
  const answered = await waitFor(async () => (await get(port, '127.0.0.2').catch(() => 0)) === 200, BOUND_MS)
  assert.ok(answered, 'a new connection from the same address is served')
})

test('the share is per client as clientOf groups addresses (an IPv6 /64 in the service)', async (t) => {
  const { port, refused } = await listen(t, { clientOf: (address) => (address === '127.0.0.3' ? '127.0.0.2' : address) })
  const two = await connect(t, port, '127.0.0.2', 3)
  const three = await connect(t, port, '127.0.0.3', 3)
  assert.ok(await waitFor(() => two.closed() + three.closed() === 1, BOUND_MS), 'six from one client: one over the share')
  assert.equal(refused(), 1)
})

test('an exempt peer (a trusted proxy) has no share', async (t) => {
  const { port, refused } = await listen(t, { exempt: (address) => address === '127.0.0.2' })
  const proxy = await connect(t, port, '127.0.0.2', SHARE * 3)
  // Nothing is closed, so the proof is a request on each: all answered, none refused.
  for (const socket of proxy.sockets) socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  assert.ok(await waitFor(() => proxy.sockets.every((s) => s.bytesRead > 0), BOUND_MS), 'every connection is answered')
  assert.equal(refused(), 0)
  assert.equal(proxy.closed(), 0)
})

test('a full listener: a site holding fewer takes the place of the longest idle connection of the site holding the most', async (t) => {
  const listener = await listen(t, { capacity: 2 * SHARE })
  const two = await connect(t, listener.port, '127.0.0.2', SHARE, { inOrder: true })
  const three = await connect(t, listener.port, '127.0.0.3', SHARE, { inOrder: true })
  // A request on the second: it was used most recently, so the first is the longest idle.
  two.sockets[0]!.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  assert.ok(await waitFor(() => two.sockets[0]!.bytesRead > 0, BOUND_MS), 'the first connection is answered')
  assert.equal(await get(listener.port, '127.0.0.1'), 200, 'another site is served by the full listener')
  assert.deepEqual(
    { two: two.closedIndexes(), three: three.closed(), evicted: listener.evicted(), refused: listener.refused() },
    { two: [1], three: 0, evicted: 1, refused: 0 },
    "the longest idle connection of the site holding the most (127.0.0.2's second; the sites are equal, the first of them found) made room",
  )
})

test('the sites of a full listener end up holding as many each: a site holding as many as the most is refused, not swapped', async (t) => {
  const listener = await listen(t, { capacity: SHARE + 1 })
  const two = await connect(t, listener.port, '127.0.0.2', SHARE, { inOrder: true })
  const three = await connect(t, listener.port, '127.0.0.3', SHARE, { inOrder: true })
  // The sixth place is free; then 127.0.0.3 takes 127.0.0.2's places while it holds two fewer: 4/2, 3/3.
  assert.ok(await waitFor(() => two.closed() === 2 && three.closed() === 2, BOUND_MS), `closed: ${two.closed()} and ${three.closed()}`)
  assert.deepEqual(
    { two: two.closedIndexes(), three: three.closedIndexes(), evicted: listener.evicted(), refused: listener.refused('max_connections') },
    { two: [0, 1], three: [3, 4], evicted: 2, refused: 2 },
  )
})

test('a full listener never closes a connection with a request in flight for another site', async (t) => {
  const waiting: http.ServerResponse[] = []
  const listener = await listen(t, { capacity: SHARE, handler: (_req, res) => void waiting.push(res) })
  const two = await connect(t, listener.port, '127.0.0.2', SHARE)
  for (const socket of two.sockets) socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  assert.ok(await waitFor(() => waiting.length === SHARE, BOUND_MS), 'every connection has a request in flight')
  assert.equal(await getOrRefused(listener.port, '127.0.0.1'), 0, 'no idle connection to close: refused')
  assert.deepEqual(
    { closed: two.closed(), refused: listener.refused('max_connections'), evicted: listener.evicted() },
    { closed: 0, refused: 1, evicted: 0 },
  )
  // Answered, the connections are idle again: the next new connection takes one's place.
  for (const res of waiting) res.end('ok')
  assert.ok(await waitFor(() => two.sockets.every((socket) => socket.bytesRead > 0), BOUND_MS), 'answered')
  waiting.length = 0
  const served = getOrRefused(listener.port, '127.0.0.1')
  assert.ok(await waitFor(() => waiting.length === 1, BOUND_MS), 'the new connection is served')
  waiting[0]!.end('ok')
  assert.equal(await served, 200)
  assert.equal(listener.evicted(), 1)
})

test("a site answers for its clients in a full listener: many clients of one site holding one connection each give way to another site's", async (t) => {
  // 127.0.0.2 to 127.0.0.7: six clients of one site (as six /64s of one IPv6 /48), one connection each.
  const sited = new Set(['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'])
  const listener = await listen(t, { capacity: sited.size, siteOf: (address) => (sited.has(address) ? 'one site' : address) })
  const held = await Promise.all([...sited].map((from) => connect(t, listener.port, from, 1)))
  for (let i = 0; i < 3; i++) assert.equal(await get(listener.port, '127.0.0.1'), 200, `another site is served (${i + 1})`)
  assert.equal(listener.refused(), 0)
  assert.ok(listener.evicted() >= 1, `the site's idle connections made room (evicted: ${listener.evicted()})`)
  assert.equal(
    held.reduce((sum, client) => sum + client.closed(), 0),
    listener.evicted(),
  )
})

test(`a connection with ${MAX_PIPELINED} requests unanswered is closed when another arrives, which is never dispatched; fewer are all answered`, async (t) => {
  const dispatched: http.ServerResponse[] = []
  const listener = await listen(t, { handler: (_req, res) => void dispatched.push(res) })
  const pipeline = (count: number) => {
    const socket = net.connect({ port: listener.port, host: '127.0.0.1' })
    t.after(() => socket.destroy())
    let answers = ''
    let closed = false
    socket.setEncoding('latin1').on('data', (chunk: string) => (answers += chunk))
    socket.on('error', () => {})
    socket.on('close', () => (closed = true))
    // One write: the server's parser sees them all in one read, as a client that never waits.
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(count))
    return { answered: () => answers.split('HTTP/1.1 200').length - 1, closed: () => closed }
  }

  // Over the cap: the first MAX_PIPELINED reach the handler; the next closes the connection.
  const hostile = pipeline(MAX_PIPELINED * 4)
  assert.ok(await waitFor(() => hostile.closed(), BOUND_MS), 'the connection is closed')
  assert.equal(dispatched.length, MAX_PIPELINED, 'no request over the cap is dispatched')
  assert.equal(listener.refused('pipelining'), 1)
  for (const res of dispatched.splice(0)) res.end('ok')

  // Under it: every request dispatched and answered, in order, on a connection kept open.
  const fine = pipeline(MAX_PIPELINED)
  assert.ok(await waitFor(() => dispatched.length === MAX_PIPELINED, BOUND_MS), 'all dispatched')
  for (const res of dispatched) res.end('ok')
  assert.ok(await waitFor(() => fine.answered() === MAX_PIPELINED, BOUND_MS), `all answered (${fine.answered()})`)
  assert.equal(fine.closed(), false)
  assert.equal(listener.refused('pipelining'), 1)
})

test('trustedPeer reads TRUST_PROXY as Fastify does', () => {
  assert.equal(trustedPeer(false)('127.0.0.1'), false)
  const loopback = trustedPeer('loopback')
  assert.deepEqual(['127.0.0.1', '127.9.9.9', '::1', '10.0.0.1'].map(loopback), [true, true, true, false])
  const listed = trustedPeer('10.0.0.0/8, 192.0.2.7')
  assert.deepEqual(['10.1.2.3', '11.0.0.1', '192.0.2.7', '192.0.2.8'].map(listed), [true, false, true, false])
})
