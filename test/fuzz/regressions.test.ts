/**
 * Minimal reproductions of the bugs the HTTP fuzzer found (test/fuzz/http-fuzz.test.ts), each
 * through a real socket, kept so that they stay fixed. Each names the rule it checks and what the
 * service answered before the fix.
 */
import assert from 'node:assert/strict'
import net, { type AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { createAdminToken } from '../../src/admin-tokens/admin-tokens.js'
import { buildSuiteApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'
import { FuzzServer } from './runner.js'
import { parseResponse, sendHttp, sendRaw } from './transport.js'

describe('regressions found by the HTTP fuzzer', () => {
  let server: FuzzServer
  let key: string
  const raw = (data: string | Buffer, method = 'GET') =>
    sendRaw({
      port: server.port,
      localAddress: '127.0.0.1',
      data: Buffer.isBuffer(data) ? data : Buffer.from(data, 'latin1'),
      method,
      endAfterWrite: false,
      timeoutMs: 5000,
    })
  const get = (path: string, headers: Array<[string, string]> = [['authorization', `Bearer ${key}`]]) =>
    sendHttp({ port: server.port, localAddress: '127.0.0.1', method: 'GET', path, headers, timeoutMs: 5000 })

  before(async () => {
    server = await FuzzServer.start()
    key = server.keys.valid
  })
  after(() => server.close())

  // OpenAPI: getPet documents 400 with an Error body. Was Fastify's onBadUrl answer in its own
  // shape: {"error":"Bad Request","code":"FST_ERR_BAD_URL",...,"statusCode":400}.
  test('a malformed percent-encoding in the path is a 400 Error body from the app', async () => {
    const res = await get('/v1/pets/%ZZ')
    assertError(res, 400, 'invalid_request')
    assert.ok(res.headers['x-request-id'], 'answered outside the app: no X-Request-Id')
    assert.ok(res.headers['x-ratelimit-limit'], 'no rate-limit headers on a /v1 answer')
  })

  // OpenAPI: 414 is not a documented status of getPet. Was 414 {"code":"FST_ERR_MAX_PARAM_LENGTH",...}.
  test('a petId longer than maxParamLength is a documented 400 Error, not a bare 414', async () => {
    const res = await get('/v1/pets/' + '9'.repeat(101))
    assertError(res, 400, 'invalid_request')
    assert.ok(res.headers['x-request-id'])
  })

  // Routing first: GET of a path only POST serves is 405, however long its parameter. The fuzzer
  // (seed 695599799) found `GET /v1/store/orders/<101 digits>/cancel` answered 400 "too long".
  test('a method the path does not serve is 405 with Allow even when a parameter is over maxParamLength', async () => {
    const res = await get(`/v1/store/orders/${'9'.repeat(101)}/cancel`)
    assertError(res, 405, 'method_not_allowed')
    assert.equal(res.headers.allow, 'POST')
    assertError(await get(`/v1/store/orders/${'9'.repeat(101)}`), 400, 'invalid_request')
  })

  // README: every error is application/json in the Error shape. Node answered a Host-less
  // HTTP/1.1 request itself, with an empty 400.
  test('an HTTP/1.1 request without Host gets an Error body', async () => {
    const res = await raw(`GET /v1/pets HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`)
    assertError(res, 400, 'invalid_request')
  })

  // OpenAPI: no operation serves `*`. The router took the asterisk-form target for the root path:
  // `GET *` answered 200 with the service document.
  // Then `GET *?after=0` (a query after it) still answered 200.
  test('the asterisk-form request target is 404 for every method, with or without a query', async () => {
    for (const target of ['*', '*?after=0'])
      for (const method of ['GET', 'HEAD', 'POST', 'OPTIONS']) {
        const res = await raw(`${method} ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, method)
        if (method === 'HEAD') assert.equal(res.status, 404, `${method} ${target}`)
        else assertError(res, 404, 'not_found')
      }
  })

  // Node answered an unknown expectation with an empty 417, a status in no operation and no Error body.
  test('an unknown Expect value does not produce an empty 417', async () => {
    const res = await raw(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nExpect: fancy\r\nConnection: close\r\n\r\n`)
    assert.notEqual(res.status, 417, 'bare 417 from Node (empty body)')
    assert.ok(res.body.length > 0, 'empty body')
    assert.ok(res.headers['x-request-id'], 'answered outside the app')
  })

  // README: 405 with Allow for a known path and an unsupported method. The body used to be parsed
  // first (PUT: 415, DELETE with an empty JSON body: 400), and methods outside ALL_METHODS got 404.
  test('a known path with an unsupported method is 405 whatever the body', async () => {
    const put = await sendHttp({
      port: server.port,
      localAddress: '127.0.0.1',
      method: 'PUT',
      path: '/v1/pets',
      headers: [
        ['authorization', `Bearer ${key}`],
        ['content-type', 'text/plain'],
      ],
      body: Buffer.from('x'),
      timeoutMs: 5000,
    })
    assertError(put, 405, 'method_not_allowed')
    assert.equal(put.headers.allow, 'GET, HEAD, POST')
    const del = await sendHttp({
      port: server.port,
      localAddress: '127.0.0.1',
      method: 'DELETE',
      path: '/v1/pets/1',
      headers: [
        ['authorization', `Bearer ${key}`],
        ['content-type', 'application/json'],
      ],
      body: Buffer.alloc(0),
      timeoutMs: 5000,
    })
    assertError(del, 405, 'method_not_allowed')
    for (const method of ['TRACE', 'PROPFIND', 'SEARCH', 'PURGE']) {
      const res = await sendHttp({
        port: server.port,
        localAddress: '127.0.0.1',
        method,
        path: '/v1/pets',
        headers: [['authorization', `Bearer ${key}`]],
        timeoutMs: 5000,
      })
      assertError(res, 405, 'method_not_allowed')
    }
  })

  // README: 404 not_found for an unknown route. A POST to one was answered by the body parser
  // (400 "Request body is not valid JSON").
  test('an unknown route is 404 whatever the body', async () => {
    const res = await sendHttp({
      port: server.port,
      localAddress: '127.0.0.1',
      method: 'POST',
      path: '/v1/nope',
      headers: [
        ['authorization', `Bearer ${key}`],
        ['content-type', 'application/json'],
      ],
      body: Buffer.from('{'),
      timeoutMs: 5000,
    })
    assertError(res, 404, 'not_found')
  })

  // README: "Every response of the deprecated operation carries Deprecation, Sunset, Link".
  test('every getPet answer carries the deprecation headers, 401 included', async () => {
    const res = await get('/v1/pets/1', [])
    assertError(res, 401, 'unauthorized')
    for (const h of ['deprecation', 'sunset', 'link']) assert.ok(res.headers[h], `401 from getPet without ${h}`)
  })

  // A name with a lone surrogate (valid JSON: "\ud800") was accepted and echoed in the 201, but
  // stored as U+FFFD: the animal read back differed from the one the 201 confirmed.
  test('a name with a lone surrogate is refused or stored exactly', async () => {
    const created = await sendHttp({
      port: server.port,
      localAddress: '127.0.0.1',
      method: 'POST',
      path: '/v1/pets',
      headers: [
        ['authorization', `Bearer ${key}`],
        ['content-type', 'application/json'],
      ],
      body: Buffer.from('{"name":"a\\ud800b","categoryId":1}'),
      timeoutMs: 5000,
    })
    if (created.status === 400) {
      assertError(created, 400, 'invalid_request')
      return
    }
    assert.equal(created.status, 201)
    const got = await get(created.headers.location!)
    assert.equal(
      JSON.parse(got.body.toString('utf8')).name,
      JSON.parse(created.body.toString('utf8')).name,
      'stored name differs from the 201',
    )
  })

  // HTTP/1.1 pipelining: a complete POST followed in the same packet by bytes that are not a
  // request. The parser error was written straight to the socket, before the POST's own answer,
  // and the connection closed: the client read 400 for a POST that was in fact committed.
  test('a parse error on a pipelined request does not overtake the answer to the one before', async () => {
    const before = (await server.t.storage.pets.listPets({ limit: 100 })).length
    const body = '{"name":"pipelined","categoryId":1}'
    const data = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}NOT HTTP\r\n\r\n`
    const all = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = []
      const socket = net.connect(server.port, '127.0.0.1', () => socket.write(data))
      socket.on('data', (c: Buffer) => chunks.push(c))
      socket.on('error', () => {})
      socket.on('close', () => resolve(Buffer.concat(chunks)))
      setTimeout(() => socket.destroy(), 2000)
    })
    const first = parseResponse(all, 'POST', true)?.response
    const created = (await server.t.storage.pets.listPets({ limit: 100 })).length > before
    assert.ok(first, 'no response at all')
    assert.equal(
      first.status,
      201,
      `first answer on the connection is ${first.status} ${first.body.toString('utf8')} (animal created: ${created})`,
    )
  })

  // README: "Every response has X-Content-Type-Options: nosniff" (the parser-level answers too).
  test('an answer to a malformed request carries nosniff', async () => {
    const res = await raw(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\nConnection: close\r\n\r\n`)
    assertError(res, 400, 'invalid_request')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
  })
})

describe('regressions found by the HTTP fuzzer in the admin API', () => {
  let admin: FastifyInstance
  let port: number
  let token: string
  const call = (method: string, path: string, headers: Array<[string, string]> = [], body?: string) =>
    sendHttp({
      port,
      localAddress: '127.0.0.1',
      method,
      path: `/admin/v1${path}`,
      headers: [['authorization', `Bearer ${token}`], ...headers],
      body: body === undefined ? undefined : Buffer.from(body),
      timeoutMs: 5000,
    })

  // The admin API on a listener of its own, as the server runs it with ADMIN_PORT.
  const t = buildSuiteApp()
  before(async () => {
    admin = await t.admin()
    await admin.listen({ port: 0, host: '127.0.0.1' })
    port = (admin.server.address() as AddressInfo).port
    token = (await createAdminToken(t.storage.adminTokens, 'regressions')).token
  })
  after(async () => {
    await admin.close()
  })

  // Admin OpenAPI: listAuditLog documents 400 for a bad query. An `after` beyond 2^53 passed
  // validation (int64 range), reached the audit log's own record of the read as a bigint, and
  // answered 500 internal_error.
  test('an audit-log after beyond 2^53 is a 400 naming after, not a 500', async () => {
    for (const after of ['9007199254740992', '9223372036854775807'])
      assertError(await call('GET', `/audit-log?after=${after}`), 400, 'invalid_request', /after/)
    assert.equal((await call('GET', '/audit-log?after=9007199254740991')).status, 200)
  })

  // Admin OpenAPI: revokeKey listed no 413 or 415, yet a body that is not JSON was answered 415
  // (and one over 16 KiB 413) by the body parser, before the route's "no body" rule.
  test('a revoke with a text body or one over 16 KiB answers a status the admin document lists', async () => {
    const created = await call('POST', '/keys', [['content-type', 'application/json']], '{"plan":"free","name":"revoke me"}')
    const id = JSON.parse(created.body.toString()).apiKey.id as string
    const doc = JSON.parse((await call('GET', '/openapi.json')).body.toString())
    const documented = Object.keys(doc.paths['/keys/{keyId}/revoke'].post.responses)
    for (const [contentType, body, status, code] of [
      ['text/plain', 'x', 415, 'unsupported_media_type'],
      ['application/json', JSON.stringify({ pad: 'x'.repeat(17 * 1024) }), 413, 'payload_too_large'],
    ] as const) {
      assertError(await call('POST', `/keys/${id}/revoke`, [['content-type', contentType]], body), status, code)
      assert.ok(documented.includes(String(status)), `revokeKey answers ${status}; the document lists ${documented.join(', ')}`)
    }
  })
})
