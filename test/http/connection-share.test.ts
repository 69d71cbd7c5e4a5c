/**
 * Each client's share of a listener's connections (src/http/connection-share.ts), over real
 * sockets from two loopback addresses (127.0.0.2 holding many, 127.0.0.1 or 127.0.0.3 the
 * others), against a plain node:http server: one client holds at most its share, a connection
 * over it is closed at once, a closed one frees its place, another client still gets in, and an
 * exempt peer has no share. The whole service over real sockets: test/system/http/connection-flood.test.ts.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { type TestContext, test } from 'node:test'
import { shareConnections, trustedPeer } from '../../src/http/connection-share.js'
import { waitFor } from '../helpers/wait.js'

const SHARE = 5
const BOUND_MS = 15_000

interface Listener {
  port: number
  refused(): number
}

async function listen(t: TestContext, options: { exempt?: (address: string) => boolean; clientOf?: (address: string) => string } = {}) {
  const server = http.createServer((_req, res) => res.end('ok'))
  let refused = 0
  shareConnections(server, {
    perClient: SHARE,
    clientOf: options.clientOf ?? ((address) => address),
    exempt: options.exempt ?? (() => false),
    onRefused: () => refused++,
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return { port: (server.address() as net.AddressInfo).port, refused: () => refused } satisfies Listener
}

interface Held {
  sockets: net.Socket[]
  /** How many the server has closed so far. */
  closed(): number
}

/** `count` idle connections from `from`, once each is connected. */
async function connect(t: TestContext, port: number, from: string, count: number): Promise<Held> {
  let closed = 0
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect({ port, host: '127.0.0.1', localAddress: from })
          socket.once('connect', () => resolve(socket))
          socket.once('error', reject)
        }),
    ),
  )
  for (const socket of sockets) {
    socket.on('error', () => {}) // a reset from the server: its close is what counts
    socket.once('close', () => closed++)
    // The server's FIN: the socket is then closed from this side too.
    socket.once('end', () => socket.destroy())
  }
  t.after(() => {
    for (const socket of sockets) socket.destroy()
  })
  return { sockets, closed: () => closed }
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

test('trustedPeer reads TRUST_PROXY as Fastify does', () => {
  assert.equal(trustedPeer(false)('127.0.0.1'), false)
  const loopback = trustedPeer('loopback')
  assert.deepEqual(['127.0.0.1', '127.9.9.9', '::1', '10.0.0.1'].map(loopback), [true, true, true, false])
  const listed = trustedPeer('10.0.0.0/8, 192.0.2.7')
  assert.deepEqual(['10.1.2.3', '11.0.0.1', '192.0.2.7', '192.0.2.8'].map(listed), [true, false, true, false])
})
