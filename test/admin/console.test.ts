/**
 * Serving the operator console (/admin/console) through app.inject: the page and its bundle on the
 * admin listener only, under its strict CSP, no referrer and no caching of the page; the bundle by
 * name only, compressed, cached for good (content-hashed names). In a real browser:
 * test/system/admin/admin-console.test.ts.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { before, describe, test } from 'node:test'
import { brotliDecompressSync } from 'node:zlib'
import Fastify from 'fastify'
import type { ConsoleManifest } from '../../src/admin/console.js'
import { registerConsole } from '../../src/admin/console.js'
import { registerErrorHandling } from '../../src/http/error-handler.js'
import { noRouteError } from '../../src/http/route-fallback.js'
import { ensureConsoleBuilt } from '../helpers/console-build.js'
import { buildAdminSuiteApp } from './helpers.js'

const CSP =
  "default-src 'none';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';font-src 'self';base-uri 'none';form-action 'none';frame-ancestors 'none'"

describe('the operator console on the admin listener', () => {
  let manifest: ConsoleManifest
  before(() => {
    manifest = ensureConsoleBuilt()
  })
  const t = buildAdminSuiteApp()

  test('GET /admin/console: the page, without a token, under the strict CSP, no referrer, never cached', async () => {
    const res = await t.app.inject({ url: '/admin/console' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    assert.equal(res.headers['content-security-policy'], CSP)
    assert.equal(res.headers['referrer-policy'], 'no-referrer')
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.equal(res.headers['x-frame-options'], 'DENY')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    // Only the bundle, by relative address; no inline script or style for the CSP to refuse.
    assert.ok(res.body.includes(`<script type="module" src="console/assets/${manifest.script}"></script>`), res.body)
    assert.ok(res.body.includes(`<link rel="stylesheet" href="console/assets/${manifest.style}">`), res.body)
    assert.doesNotMatch(res.body, /<script>|<style|\sstyle=|\son[a-z]+=/i)
    assert.doesNotMatch(res.body, /https?:\/\//, 'nothing from another origin (no CDN)')
  })

  test('the bundle: by its hashed name, compressed as accepted, cached for good, revalidated by ETag', async () => {
    const plain = await t.app.inject({ url: `/admin/console/assets/${manifest.script}` })
    assert.equal(plain.statusCode, 200)
    assert.equal(plain.headers['content-type'], 'application/javascript; charset=utf-8')
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
    assert.match(plain.body, /uPlot|uplot/, 'uPlot is bundled in')
    const br = await t.app.inject({ url: `/admin/console/assets/${manifest.script}`, headers: { 'accept-encoding': 'br, gzip' } })
    assert.equal(br.headers['content-encoding'], 'br')
    assert.equal(brotliDecompressSync(br.rawPayload).toString('utf8'), plain.body)
    const again = await t.app.inject({
      url: `/admin/console/assets/${manifest.script}`,
      headers: { 'if-none-match': String(plain.headers.etag) },
    })
    assert.equal(again.statusCode, 304)
    const css = await t.app.inject({ url: `/admin/console/assets/${manifest.style}` })
    assert.equal(css.statusCode, 200)
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8')
    assert.match(css.body, /\.uplot/, "uPlot's style sheet is bundled in")
    const notices = await t.app.inject({ url: '/admin/console/assets/THIRD-PARTY-LICENSES.txt' })
    assert.match(notices.body, /preact .*\(MIT\)/)
    assert.match(notices.body, /uplot .*\(MIT\)/)
  })

  test('only the files of the build exist: anything else is the 404 of an unknown path', async () => {
    for (const url of [
      '/admin/console/assets/nope.js',
      '/admin/console/assets/..%2fmanifest.json',
      '/admin/console/assets/%2e%2e%2f%2e%2e%2fconsole.js',
      '/admin/console/manifest.json',
      '/admin/console/keys',
    ]) {
      const res = await t.app.inject({ url })
      assert.equal(res.statusCode, 404, url)
      assert.equal(res.json().code, 'not_found', url)
    }
  })

  test('/admin/console/ is sent to /admin/console (where its relative links are written for); other methods are 405', async () => {
    const slash = await t.app.inject({ url: '/admin/console/' })
    assert.equal(slash.statusCode, 308)
    assert.equal(slash.headers.location, '/admin/console')
    const post = await t.app.inject({ method: 'POST', url: '/admin/console' })
    assert.equal(post.statusCode, 405)
    assert.match(String(post.headers.allow), /GET/)
  })

  test('the page is public, the API it calls is not: every call still needs the admin token', async () => {
    const res = await t.app.inject({ url: '/admin/v1/keys' })
    assert.equal(res.statusCode, 401)
    assert.equal((await t.call('GET', '/admin/v1/keys')).statusCode, 200)
  })

  test("the API's answers keep the API's headers (the console's CSP stays on the console's routes)", async () => {
    const res = await t.call('GET', '/admin/v1/keys')
    assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'")
    assert.equal(res.headers['referrer-policy'], undefined)
  })

  test('the main listener has no console: the 404 of any unknown path', async () => {
    for (const url of ['/admin/console', `/admin/console/assets/${manifest.script}`, '/admin/console/']) {
      const res = await t.api.inject({ url })
      assert.equal(res.statusCode, 404, url)
      assert.deepEqual(res.json(), { code: 'not_found', message: `No route for GET ${url}`, status: 404 })
    }
  })
})

test('a checkout whose console was never built: the page says so (503), in the Error shape', async (t) => {
  const empty = mkdtempSync(join(tmpdir(), 'console-unbuilt-'))
  t.after(() => rmSync(empty, { recursive: true, force: true }))
  const app = Fastify()
  registerErrorHandling(app, noRouteError)
  await registerConsole(app, { dir: `${empty}/` })
  t.after(() => app.close())
  const res = await app.inject({ url: '/admin/console' })
  assert.equal(res.statusCode, 503)
  assert.deepEqual(res.json(), { code: 'service_unavailable', message: 'The console is not built: run npm run build', status: 503 })
  assert.equal((await app.inject({ url: '/admin/console/assets/console.js' })).statusCode, 404)
})
