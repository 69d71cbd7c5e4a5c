/**
 * The public /docs console (Swagger UI): only its own files exist under /docs/static, anything else
 * is a 404 in the Error shape that logs nothing at error level; its pages cannot be framed; its
 * large files go out compressed and cacheable, while the API's answers stay as they were. Through
 * app.inject, and through a real socket where a client would normalise the path first.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Writable } from 'node:stream'
import { before, describe, test } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { pino } from 'pino'
import { sendRaw } from '../fuzz/transport.js'
import { bearer, buildSuiteApp, buildTestApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

const BUNDLE = readFileSync(join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static', 'swagger-ui-bundle.js'))

/** Paths that try to leave /docs/static, as sent by a client that does not normalise them. */
const TRAVERSALS = [
  '/docs/static/../../package.json',
  '/docs/static/%2e%2e/%2e%2e/package.json',
  '/docs/static/..%5c..%5cpackage.json',
  '/docs/static/..%2f..%2fpackage.json',
  '/docs/static/..\\..\\package.json',
  '/docs/static/../../../../../../etc/passwd',
  '/docs/static/%00',
  '/docs/static/swagger-ui.css%00.js',
]

/** The level of every line the app logs. */
function logLevels() {
  const levels: Array<{ level: number; msg: string }> = []
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) levels.push(JSON.parse(line))
      callback()
    },
  })
  return { logger: pino({ level: 'info' }, sink), errors: () => levels.filter((l) => l.level >= 50) }
}

describe('/docs', () => {
  const log = logLevels()
  let port: number
  const raw = (path: string, headers = '') =>
    sendRaw({
      port,
      localAddress: '127.0.0.1',
      data: Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`, 'latin1'),
      method: 'GET',
      endAfterWrite: false,
      timeoutMs: 5000,
    })

  const t = buildSuiteApp({ logger: log.logger })
  before(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    port = (t.app.server.address() as { port: number }).port
  })

  test('over a socket, a path that leaves /docs/static is a 404 Error and logs nothing at error level', async () => {
    const answers = []
    for (const path of TRAVERSALS) answers.push(await raw(path))
    assert.deepEqual(log.errors(), [])
    for (const [i, res] of answers.entries()) {
      assertError(res, 404, 'not_found')
      assert.equal(res.body.includes('"name"'), false, `${TRAVERSALS[i]}: no file content`)
    }
  })

  test('through app.inject too (the encoded variants, which it does not normalise)', async () => {
    for (const url of ['/docs/static/..%5c..%5cpackage.json', '/docs/static/..%2f..%2fpackage.json', '/docs/static/%00']) {
      assertError(await t.app.inject({ url }), 404, 'not_found')
    }
    assert.deepEqual(log.errors(), [])
  })

  test('a missing file, or the folder itself, is a 404 (not a 405 saying GET is not allowed)', async () => {
    for (const url of ['/docs/static/missing.js', '/docs/static/theme/x.css', '/docs/static/', '/docs/static', '/docs/nothing']) {
      assertError(await t.app.inject({ url }), 404, 'not_found')
    }
    assert.equal((await t.app.inject({ method: 'HEAD', url: '/docs/static/missing.js' })).statusCode, 404)
    assertError(await raw('/docs/static/missing.js'), 404, 'not_found')
    // Another method on a file is still a 405 with Allow.
    const post = await t.app.inject({ method: 'POST', url: '/docs/static/swagger-ui.css' })
    assertError(post, 405, 'method_not_allowed')
    assert.equal(post.headers.allow, 'GET, HEAD')
    assert.deepEqual(log.errors(), [])
  })

  test('a Range past the end or a failing If-Match on a file: the whole file, no error', async () => {
    for (const headers of [
      { range: 'bytes=99999999-' },
      { 'if-match': '"other"' },
      { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
    ]) {
      const res = await t.app.inject({ url: '/docs/static/swagger-ui-bundle.js', headers })
      assert.equal(res.statusCode, 200, JSON.stringify(headers))
      assert.ok(res.rawPayload.equals(BUNDLE))
    }
    assert.deepEqual(log.errors(), [])
  })

  test('the console cannot be framed: X-Frame-Options DENY and CSP frame-ancestors none', async () => {
    for (const url of ['/docs', '/docs/', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css']) {
      const res = await t.app.inject({ url })
      assert.equal(res.statusCode, 200, url)
      assert.equal(res.headers['x-frame-options'], 'DENY', url)
      assert.match(String(res.headers['content-security-policy']), /(^|;)\s*frame-ancestors 'none'/, url)
    }
  })

  test('swagger-ui-bundle.js goes out compressed (br, gzip) with a day of Cache-Control and an ETag', async () => {
    const decode = { br: brotliDecompressSync, gzip: gunzipSync }
    const etags = new Set<string>()
    for (const [accept, coding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['*', 'br'],
    ] as const) {
      const res = await t.app.inject({ url: '/docs/static/swagger-ui-bundle.js', headers: { 'accept-encoding': accept } })
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['content-encoding'], coding, accept)
      assert.ok(res.rawPayload.length < BUNDLE.length / 3, `${coding}: ${res.rawPayload.length} bytes`)
      assert.ok(decode[coding](res.rawPayload).equals(BUNDLE), `${coding} decodes to the file`)
      assert.equal(res.headers['cache-control'], 'public, max-age=86400')
      assert.equal(res.headers.vary, 'accept-encoding')
      assert.match(String(res.headers['content-type']), /^application\/javascript/)
      etags.add(String(res.headers.etag))
      // Asked again with its ETag: 304, no body.
      const again = await t.app.inject({
        url: '/docs/static/swagger-ui-bundle.js',
        headers: { 'accept-encoding': accept, 'if-none-match': String(res.headers.etag) },
      })
      assert.equal(again.statusCode, 304)
      assert.equal(again.rawPayload.length, 0)
      assert.equal(again.headers.etag, res.headers.etag)
    }
    const plain = await t.app.inject({ url: '/docs/static/swagger-ui-bundle.js' })
    assert.equal(plain.headers['content-encoding'], undefined)
    assert.ok(plain.rawPayload.equals(BUNDLE))
    etags.add(String(plain.headers.etag))
    assert.equal(etags.size, 3, `one ETag per content coding: ${[...etags].join(' ')}`)
    // A stale ETag (another coding's, or an older file's) gets the file.
    const stale = await t.app.inject({
      url: '/docs/static/swagger-ui-bundle.js',
      headers: { 'accept-encoding': 'gzip', 'if-none-match': String(plain.headers.etag) },
    })
    assert.equal(stale.statusCode, 200)
  })

  test('with CORS configured, Vary names both Origin and Accept-Encoding', async (context) => {
    const cors = await buildTestApp(context, { env: { CORS_ORIGINS: 'https://app.example' } })
    const res = await cors.app.inject({
      url: '/docs/static/swagger-ui.css',
      headers: { origin: 'https://app.example', 'accept-encoding': 'gzip' },
    })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(String(res.headers.vary).toLowerCase().split(/,\s*/).sort(), ['accept-encoding', 'origin'])
  })

  test('over a socket, the bundle arrives gzip-compressed and decodes to the file', async () => {
    const res = await raw('/docs/static/swagger-ui-bundle.js', 'Accept-Encoding: gzip\r\n')
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-encoding'], 'gzip')
    assert.ok(gunzipSync(res.body).equals(BUNDLE))
  })

  test("API answers are neither compressed nor given the console's headers, whatever the client accepts", async () => {
    const key = await t.key()
    for (const url of ['/v1/pets', '/v1/openapi.json', '/v1/nothing', '/docs/nothing']) {
      const res = await t.app.inject({ url, headers: { ...bearer(key), 'accept-encoding': 'gzip, br' } })
      assert.equal(res.headers['content-encoding'], undefined, url)
      assert.equal(res.headers['x-frame-options'], undefined, url)
      assert.equal(res.headers['cross-origin-opener-policy'], undefined, url)
      assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", url)
      assert.equal(res.headers['cache-control'], 'no-store', url)
    }
  })
})
