/**
 * The one request helper of the tests, the benchmark and the soak (tools/http.mjs): the answer as
 * a test reads it and as the benchmark captures it, redirects followed as fetch follows them, and
 * failures that say why.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { freePort, request, wireSize } from '../../tools/http.mjs'

/** A loopback server answering with `handler`; closed after the test. */
async function serve(t: TestContext, handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return (server.address() as AddressInfo).port
}

test('the answer: status, headers to read and as sent, the bytes, the text and the parsed JSON', async (t) => {
  let seen: { method?: string; headers: http.IncomingHttpHeaders; body: string } = { headers: {}, body: '' }
  const port = await serve(t, (req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (s: string) => (body += s))
    req.on('end', () => {
      seen = { method: req.method, headers: req.headers, body }
      res.writeHead(201, [
        ['X-First', 'one'],
        ['Content-Type', 'application/json'],
        ['x-first', 'two'],
      ])
      res.end('{"id":1}')
    })
  })
  const answer = await request(`http://127.0.0.1:${port}/v1/pets`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: { name: 'rex' },
  })
  assert.equal(seen.method, 'POST')
  assert.equal(seen.body, '{"name":"rex"}', 'a body that is not a string is sent as JSON')
  assert.equal(seen.headers['content-type'], 'application/json')
  assert.equal(seen.headers['content-length'], '14')
  assert.equal(seen.headers.authorization, 'Bearer k')
  assert.equal(answer.status, 201)
  assert.equal(answer.headers.get('x-first'), 'one, two')
  assert.deepEqual(
    answer.rawHeaders.filter(([name]) => name.toLowerCase() !== 'date' && name.toLowerCase() !== 'connection'),
    [
      ['X-First', 'one'],
      ['Content-Type', 'application/json'],
      ['x-first', 'two'],
      ['Transfer-Encoding', 'chunked'],
    ],
  )
  assert.deepEqual(answer.body, { id: 1 })
  assert.equal(answer.text, '{"id":1}')
  assert.deepEqual(answer.bytes, Buffer.from('{"id":1}'))
  // A port and a path are the same request; a string body is sent as it is, under its own content-type.
  const again = await request(port, { path: '/x', method: 'PUT', body: 'a=b', headers: { 'Content-Type': 'text/plain' } })
  assert.equal(again.status, 201)
  assert.deepEqual([seen.body, seen.headers['content-type']], ['a=b', 'text/plain'])
  assert.equal(
    wireSize(again),
    'HTTP/1.1 201 X\r\n'.length +
      'X-First: one\r\n'.length +
      'Content-Type: application/json\r\n'.length +
      'x-first: two\r\n'.length +
      'Transfer-Encoding: chunked\r\n'.length +
      2 +
      8,
  )
})

test('a GET follows redirects as fetch does, unless told not to; a POST does not', async (t) => {
  const port = await serve(t, (req, res) => {
    if (req.url === '/old') res.writeHead(308, { location: '/new' }).end()
    else res.writeHead(200, { 'content-type': 'text/plain' }).end(`at ${req.url}`)
  })
  const followed = await request(`http://127.0.0.1:${port}/old`)
  assert.deepEqual([followed.status, followed.body], [200, 'at /new'])
  const manual = await request(port, { path: '/old', redirect: 'manual' })
  assert.deepEqual([manual.status, manual.headers.get('location')], [308, '/new'])
  assert.equal((await request(port, { path: '/old', method: 'POST', body: '' })).status, 308)
})

test('a refused connection rejects with the socket error as cause; no whole answer in time, a TimeoutError', async (t) => {
  const closed = await freePort()
  await assert.rejects(request(`http://127.0.0.1:${closed}/`), (error: Error & { cause?: { code?: string } }) => {
    assert.equal(error.cause?.code, 'ECONNREFUSED')
    assert.match(error.message, new RegExp(`^GET http://127.0.0.1:${closed}/: `))
    return true
  })
  const silent = await serve(t, (_req, res) => res.writeHead(200).write('partial'))
  await assert.rejects(request(silent, { path: '/', timeoutMs: 300 }), (error: Error) => {
    assert.equal(error.name, 'TimeoutError')
    assert.match(error.message, /no whole answer within 300 ms/)
    return true
  })
})
