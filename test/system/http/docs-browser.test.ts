/**
 * The interactive documentation in a real browser: /docs (Swagger UI) renders every operation of
 * the OpenAPI document and each of its webhooks (the list comes from the document the server serves, so an operation added
 * later is expected without editing this test), with getPet marked deprecated; its top bar shows the document's own
 * address (/v1/openapi.json, not /docs/json, which redirects), and it says how to get a key. Needs Debian's chromium (playwright-core
 * drives it; no browser download). Missing chromium: a loud skip locally, a failure in CI.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { request, startServer, useTempDir } from '../helpers/process.js'

test('GET /docs renders every operation of the document, getPet deprecated, in Chromium', { timeout: 55_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const dir = await useTempDir(t)
  const server = await startServer(t, { dir })

  // Both are public: no key needed.
  const spec = await request(`${server.url}/v1/openapi.json`)
  assert.equal(spec.status, 200, spec.text)
  type PathItems = Record<string, Record<string, { operationId?: string; deprecated?: boolean }>>
  const doc = spec.body as { openapi: string; paths: PathItems; webhooks?: PathItems }
  assert.match(doc.openapi, /^3\./)
  assert.equal(doc.paths['/pets']?.get?.operationId, 'listPets')
  assert.equal(doc.paths['/pets']?.post?.operationId, 'createPet')
  assert.equal(doc.paths['/pets/{petId}']?.get?.operationId, 'getPet')
  assert.equal(doc.paths['/pets/{petId}']?.get?.deprecated, true)
  const methods = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options'])
  // The webhooks (the events the service sends) are drawn as operations too, under their names.
  const documented = [...Object.entries(doc.paths), ...Object.entries(doc.webhooks ?? {})]
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => methods.has(method))
        .map(([method, op]) => `${method.toUpperCase()} ${path}${op.deprecated === true ? ' (deprecated)' : ''}`),
    )
    .sort()
  assert.ok(documented.includes('GET /pets/{petId} (deprecated)'), documented.join(', '))
  const html = await request(`${server.url}/docs`)
  assert.equal(html.status, 200)
  assert.match(html.headers.get('content-type') ?? '', /text\/html/)

  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
  const pageErrors: string[] = []
  page.on('pageerror', (error) => pageErrors.push(String(error)))
  const failedRequests: string[] = []
  page.on('requestfailed', (r) => failedRequests.push(`${r.url()}: ${r.failure()?.errorText}`))
  page.on('response', (r) => {
    if (r.status() >= 400) failedRequests.push(`${r.url()}: ${r.status()}`)
  })
  // The page's Content-Security-Policy must not block anything Swagger UI does.
  const blocked: string[] = []
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) blocked.push(m.text())
  })
  const bundle = page.waitForResponse((r) => r.url().endsWith('/docs/static/swagger-ui-bundle.js'))
  const fetched: string[] = []
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname))

  const response = await page.goto(`${server.url}/docs`, { waitUntil: 'load', timeout: 20_000 })
  assert.ok(response, 'navigation response')
  assert.ok(response.status() < 400, `GET /docs in the browser: ${response.status()}`)

  // Swagger UI renders one .opblock per operation once it has fetched and parsed the document.
  await page.waitForSelector('.opblock', { timeout: 20_000 })
  await page.waitForFunction(`document.querySelectorAll('.opblock').length >= ${documented.length}`, undefined, {
    timeout: 10_000,
  })
  const ops = await page.$$eval('.opblock', (blocks) =>
    blocks.map((b) => {
      // Swagger UI renders a deprecated operation's path as .opblock-summary-path__deprecated.
      const path = b.querySelector('.opblock-summary-path, .opblock-summary-path__deprecated')
      return {
        method: b.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '',
        path: (path?.getAttribute('data-path') ?? path?.textContent ?? '').replace(/\u200b/g, '').trim(),
        deprecated: b.classList.contains('opblock-deprecated'),
      }
    }),
  )
  const sorted = ops.map((o) => `${o.method} ${o.path}${o.deprecated ? ' (deprecated)' : ''}`).sort()
  assert.deepEqual(sorted, documented, `rendered operations: ${JSON.stringify(ops)}`)
  const text = await page.locator('body').innerText()
  assert.match(text, /Animal Store API/)
  assert.ok(text.includes('/pets/{petId}'), 'the path template is shown')
  assert.ok(text.includes('node dist/cli.js keys create --plan free --name NAME'), 'the page says how to get a key')

  // Issue 32: the Authorize button is above the fold of a 1280x1000 window, and the long reference
  // (limits, errors, decisions) is folded in the description and opens on a click.
  const authorize = await page.locator('.btn.authorize').first().boundingBox()
  assert.ok(authorize, 'an Authorize button')
  assert.ok(authorize.y + authorize.height <= 1000, `Authorize at y=${authorize.y}, below the fold`)
  const folded = page.locator('.info details')
  assert.equal(await folded.count(), 1, 'the reference is folded in the description')
  assert.equal(await folded.locator('table').isVisible(), false, 'the error table is folded')
  await folded.locator('summary').click()
  assert.equal(await folded.locator('table').isVisible(), true, 'the error table opens')
  assert.match(await folded.innerText(), /rate_limited\s+429/, 'the error table lists the codes')

  // The top bar names the document the page loaded: its own address, fetched directly.
  const topBar = await page.$$eval('.topbar input, .topbar select', (fields) =>
    fields.map((f) => (f as unknown as { value: string }).value),
  )
  assert.deepEqual(topBar, ['/v1/openapi.json'], 'the address in the top bar')
  assert.equal(await page.locator('.topbar select option').innerText(), '/v1/openapi.json')
  assert.ok(fetched.includes('/v1/openapi.json'), `fetched: ${fetched.join(', ')}`)
  assert.equal(fetched.includes('/docs/json'), false, `fetched: ${fetched.join(', ')}`)

  // Issue 32: the Servers list offers no made-up hosts (this server has no PUBLIC_BASE_URL: /v1 alone),
  // and an error response shows its own example, not the schema's placeholder (invalid_request, 0).
  const serverOptions = await page.locator('.servers select option').allInnerTexts()
  assert.deepEqual(
    serverOptions.map((o) => o.split(' ')[0]),
    ['/v1'],
    `servers: ${serverOptions.join(' | ')}`,
  )
  const listPets = page
    .locator('.opblock')
    .filter({ has: page.locator('.opblock-summary-method', { hasText: /^GET$/ }) })
    .filter({
      has: page.locator('[data-path="/pets"]'),
    })
  await listPets.locator('.opblock-summary').first().click()
  const unauthorized = listPets.locator('tr.response[data-code="401"]')
  await unauthorized.waitFor({ timeout: 10_000 })
  const example = await unauthorized.innerText()
  assert.match(example, /"code": "unauthorized"/, example)
  assert.match(example, /"status": 401/, example)
  assert.doesNotMatch(example, /"status": 0/, example)

  const shot = join(dir, 'docs.png')
  await page.screenshot({ path: shot, fullPage: true })
  // DOCS_SCREENSHOT_COPY=/path.png keeps a copy (e.g. as a CI artifact); the temp dir is removed.
  if (process.env.DOCS_SCREENSHOT_COPY) await page.screenshot({ path: process.env.DOCS_SCREENSHOT_COPY, fullPage: true })
  const png = await readFile(shot)
  assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'a PNG signature')
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR')
  const width = png.readUInt32BE(16)
  const height = png.readUInt32BE(20)
  assert.ok(width >= 1000 && height >= 600, `screenshot ${width}x${height}`)
  assert.ok(png.length > 20_000, `a non-trivial screenshot (${png.length} bytes)`)
  process.stdout.write(`docs screenshot: ${width}x${height}, ${png.length} bytes; operations: ${sorted.join(', ')}\n`)

  assert.deepEqual(pageErrors, [], 'no script errors on the page')
  assert.deepEqual(failedRequests, [], 'every resource of the page loaded')
  assert.deepEqual(blocked, [], 'nothing blocked by the CSP')
  // Chromium accepts br: the 1.5 MB bundle comes compressed, and decodes to a working page (above).
  assert.equal((await bundle).headers()['content-encoding'], 'br')
})
