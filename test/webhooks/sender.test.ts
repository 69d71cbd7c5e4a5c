/**
 * One attempt (src/webhooks/sender.ts) against receivers on loopback: the answer's status; a
 * redirect is not followed (the place it points to is never called); a receiver that does not
 * answer within the timeout fails the attempt; an answer's body is read up to its cap and the
 * connection closed; a stop interrupts it. Server-side request forgery: without
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS no connection is made to a private address in any form: a name
 * resolving to 127.0.0.1 (the resolver injected), an IP literal, an IPv4-mapped IPv6 literal,
 * and a redirect to one is not followed either. Connections kept between attempts (the server's
 * way): shared by the attempts to a receiver, closed by an attempt that ends early, and replaced
 * when the receiver dropped one as it was reused.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import { after, describe, test } from 'node:test'
import {
  INTERRUPTED,
  MAX_RESPONSE_BYTES,
  RESPONSE_EXCERPT_CHARS,
  ReceiverConnections,
  type SendRules,
  sendWebhook,
} from '../../src/webhooks/sender.js'

interface Receiver {
  url: string
  port: number
  hits: Array<{ headers: IncomingMessage['headers']; body: string }>
  connections: number
  close(): Promise<void>
}

const servers: Receiver[] = []
after(() => Promise.all(servers.map((s) => s.close())))

async function receiver(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<Receiver> {
  const hits: Receiver['hits'] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      hits.push({ headers: req.headers, body })
      answer(req, res, body)
    })
  })
  const r = { hits, connections: 0 } as Receiver
  server.on('connection', () => r.connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  Object.assign(r, {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
  servers.push(r)
  return r
}

const names: Record<string, string[]> = {}
const open: SendRules = {
  timeoutMs: 2_000,
  allowPrivateNetworks: true,
  resolve: async (host) => names[host] ?? Promise.reject(Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' })),
}
const guarded: SendRules = { ...open, allowPrivateNetworks: false }
const HEADERS = { 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }
const BODY = '{"type":"pet.created","timestamp":"2026-11-29T07:30:00.000Z","data":{"id":1}}'

describe('an attempt', () => {
  test('a POST with the headers and body given; its status, duration and answer kept', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end())
    const result = await sendWebhook(r.url, HEADERS, BODY, open)
    assert.equal(result.statusCode, 204)
    assert.equal(result.error, null)
    assert.ok(result.durationMs >= 0 && result.durationMs < 2_000)
    assert.equal(r.hits.length, 1)
    assert.equal(r.hits[0]!.body, BODY)
    assert.equal(r.hits[0]!.headers['webhook-id'], 'evt_1')
    assert.equal(r.hits[0]!.headers['content-type'], 'application/json')
    const failing = await receiver((_req, res) => res.writeHead(500).end('{"oops":true}'))
    const failed = await sendWebhook(failing.url, HEADERS, BODY, open)
    assert.deepEqual([failed.statusCode, failed.error, failed.responseExcerpt], [500, 'the receiver answered 500', '{"oops":true}'])
  })

  test('a redirect is not followed: a failed attempt, and where it points is never called', async () => {
    const elsewhere = await receiver((_req, res) => res.writeHead(200).end())
    const redirecting = await receiver((_req, res) => res.writeHead(307, { location: elsewhere.url }).end())
    const result = await sendWebhook(redirecting.url, HEADERS, BODY, open)
    assert.equal(result.statusCode, 307)
    assert.equal(result.error, `redirect not followed (307 to ${elsewhere.url})`)
    assert.equal(elsewhere.hits.length, 0)
    assert.equal(elsewhere.connections, 0)
  })

  test('a receiver that does not answer within the timeout fails the attempt, and its connection is closed', async () => {
    let closed = false
    const silent = await receiver((req) => req.socket.on('close', () => (closed = true)))
    const started = performance.now()
    const result = await sendWebhook(silent.url, HEADERS, BODY, { ...open, timeoutMs: 300 })
    const took = performance.now() - started
    assert.equal(result.statusCode, null)
    assert.equal(result.error, 'timed out after 300 ms')
    assert.ok(took >= 290 && took < 1_500, `took ${took} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.ok(closed, 'the connection is closed')
  })

  test('an answer’s body is read up to the cap, the rest left with the closed connection; the excerpt kept is short', async () => {
    let written = 0
    let closedEarly = false
    const chunk = Buffer.alloc(16 * 1024, 'a')
    const flood = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.on('close', () => (closedEarly = !res.writableFinished))
      const more = () => {
        // 16 MiB on offer: far more than is read.
        while (written < 16 * 1024 * 1024) {
          written += chunk.length
          if (!res.write(chunk)) return void res.once('drain', more)
        }
        res.end()
      }
      more()
    })
    const result = await sendWebhook(flood.url, HEADERS, BODY, open)
    assert.equal(result.statusCode, 200)
    assert.equal(result.error, null, 'a 2xx is delivered, whatever its body')
    assert.equal(result.responseExcerpt?.length, RESPONSE_EXCERPT_CHARS)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.ok(closedEarly, 'the connection was closed before the receiver finished')
    assert.ok(written < 16 * 1024 * 1024, `the receiver could not write it all (${written} bytes written, ${MAX_RESPONSE_BYTES} read)`)
  })

  test('a stop interrupts an attempt in flight at once', async () => {
    const silent = await receiver(() => {})
    const stop = new AbortController()
    const pending = sendWebhook(silent.url, HEADERS, BODY, { ...open, timeoutMs: 10_000 }, stop.signal)
    setTimeout(() => stop.abort(), 100)
    const result = await pending
    assert.equal(result.error, INTERRUPTED)
    assert.ok(result.durationMs < 2_000)
  })
})

describe('server-side request forgery, judged at each attempt on the address connected to', () => {
  test('a name that resolves to 127.0.0.1 is refused before any connection', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end())
    names['rebound.example.test'] = ['127.0.0.1']
    const result = await sendWebhook(`http://rebound.example.test:${r.port}/hook`, HEADERS, BODY, guarded)
    assert.equal(result.statusCode, null)
    assert.equal(
      result.error,
      'refused: rebound.example.test resolves to 127.0.0.1, a loopback address (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)',
    )
    assert.equal(r.connections, 0)
    // One private address among public ones is enough.
    names['mixed.example.test'] = ['93.184.215.14', '10.0.0.7']
    const mixed = await sendWebhook(`http://mixed.example.test:${r.port}/hook`, HEADERS, BODY, guarded)
    assert.match(mixed.error ?? '', /^refused: mixed\.example\.test resolves to 10\.0\.0\.7, a private address/)
    // The same name, with private networks allowed, is called.
    const allowed = await sendWebhook(`http://rebound.example.test:${r.port}/hook`, HEADERS, BODY, open)
    assert.equal(allowed.statusCode, 204)
  })

  test('an IP literal, an IPv4-mapped IPv6 literal and a decimal host are refused without a connection', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end())
    const cases: Array<[string, RegExp]> = [
      [`http://127.0.0.1:${r.port}/hook`, /^refused: 127\.0\.0\.1 is a loopback address/],
      [`http://[::ffff:127.0.0.1]:${r.port}/hook`, /^refused: ::ffff:7f00:1 is a loopback address mapped into IPv6 \(127\.0\.0\.1\)/],
      [`http://2130706433:${r.port}/hook`, /^refused: 127\.0\.0\.1 is a loopback address/],
      [`http://[::1]:${r.port}/hook`, /^refused: ::1 is a loopback address/],
      [`https://169.254.169.254/latest/meta-data`, /^refused: 169\.254\.169\.254 is a link-local address/],
    ]
    for (const [url, error] of cases) {
      const result = await sendWebhook(url, HEADERS, BODY, guarded)
      assert.equal(result.statusCode, null, url)
      assert.match(result.error ?? '', error, url)
    }
    assert.equal(r.connections, 0)
  })

  test('a redirect to a private address is not followed', async () => {
    const inside = await receiver((_req, res) => res.writeHead(200).end('secret'))
    // The public receiver, as its name resolves: the test's own loopback server standing in for it, reached with the rule lifted.
    const outside = await receiver((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/admin` }).end())
    const result = await sendWebhook(outside.url, HEADERS, BODY, open)
    assert.equal(result.error, `redirect not followed (302 to http://127.0.0.1:${inside.port}/admin)`)
    assert.equal(inside.connections, 0)
  })
})

describe('connections kept between attempts (ReceiverConnections, as the server sends)', () => {
  const kept = (): SendRules & { connections: ReceiverConnections } => {
    const connections = new ReceiverConnections()
    after(() => connections.close())
    return { ...open, connections }
  }

  test('attempts to one receiver share one connection, without `connection: close`; close() ends it', async () => {
    let closed = 0
    const r = await receiver((req, res) => {
      req.socket.once('close', () => closed++)
      res.writeHead(204).end()
    })
    const rules = kept()
    for (let i = 0; i < 3; i++) assert.equal((await sendWebhook(r.url, HEADERS, BODY, rules)).statusCode, 204)
    const failing = await receiver((_req, res) => res.writeHead(503).end('busy'))
    for (let i = 0; i < 2; i++) assert.equal((await sendWebhook(failing.url, HEADERS, BODY, rules)).statusCode, 503)
    assert.deepEqual([r.hits.length, r.connections, failing.connections], [3, 1, 1])
    assert.equal(r.hits[0]!.headers.connection, 'keep-alive')
    rules.connections.close()
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.ok(closed >= 1, 'the kept connection is closed')
  })

  test('the destination rule holds on them: a name that resolves to 127.0.0.1 is refused before any connection', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end())
    names['kept.example.test'] = ['127.0.0.1']
    const rules = { ...kept(), allowPrivateNetworks: false }
    const result = await sendWebhook(`http://kept.example.test:${r.port}/hook`, HEADERS, BODY, rules)
    assert.match(result.error ?? '', /^refused: kept\.example\.test resolves to 127\.0\.0\.1, a loopback address/)
    assert.equal(r.connections, 0)
  })

  test('an attempt that timed out, or whose answer passed the cap, closes its connection: the next makes a new one', async () => {
    let n = 0
    const r = await receiver((_req, res) => {
      n++
      if (n === 1) return // never answered
      if (n === 2) return res.writeHead(200).end('x'.repeat(300))
      res.writeHead(204).end()
    })
    const rules = { ...kept(), timeoutMs: 300, maxResponseBytes: 100 }
    assert.equal((await sendWebhook(r.url, HEADERS, BODY, rules)).error, 'timed out after 300 ms')
    assert.equal((await sendWebhook(r.url, HEADERS, BODY, rules)).statusCode, 200)
    assert.equal((await sendWebhook(r.url, HEADERS, BODY, rules)).statusCode, 204)
    assert.equal((await sendWebhook(r.url, HEADERS, BODY, rules)).statusCode, 204)
    assert.equal(r.connections, 3, 'one for the timeout, one for the capped answer, one kept for the last two')
  })

  test('a kept connection that the receiver drops as it is reused: the attempt is sent again, once, on a new connection', async () => {
    // A receiver that answers the first request of each connection and drops the connection at the
    // second, unanswered: what a receiver closing an idle connection as it is reused looks like.
    const requests: number[] = []
    let connections = 0
    const server = createNetServer((socket) => {
      const id = ++connections
      let seen = 0
      socket.on('data', (data: Buffer) => {
        for (const _ of data.toString('latin1').matchAll(/POST \/hook/g)) {
          seen++
          requests.push(id)
          if (seen === 1) socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n')
          else socket.destroy()
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    after(() => new Promise((resolve) => server.close(resolve)))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
    const rules = kept()
    assert.equal((await sendWebhook(url, HEADERS, BODY, rules)).statusCode, 204)
    const again = await sendWebhook(url, HEADERS, BODY, rules)
    assert.deepEqual([again.statusCode, again.error], [204, null])
    assert.deepEqual(requests, [1, 1, 2], 'dropped on the kept connection, answered on a new one')
  })
})
