/**
 * The docs console as a new user meets it: open /docs at the address the server listens on
 * (127.0.0.1, not the "localhost" of any configured base URL), authorize with a key, and run
 * listPets and createPet with "Try it out" — the calls must reach the API (same origin, no CORS)
 * and the page must show the exact int64 values the API sent.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { bearer, createKeyViaCli, request, startServer, useTempDir } from '../helpers/process.js'

const INT64_MAX = '9223372036854775807'

test('Try it out on /docs works from 127.0.0.1: authorize, listPets 200, createPet 201, int64 shown exactly', {
  timeout: 90_000,
}, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const dir = await useTempDir(t)
  const server = await startServer(t, { dir })
  const { key } = await createKeyViaCli(server.db, { plan: 'pro', name: 'docs' })
  const big = await request(`${server.url}/v1/pets`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: `{"name":"Big","categoryId":${INT64_MAX}}`,
  })
  assert.equal(big.status, 201, big.text)

  const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } })
  const pageErrors: string[] = []
  page.on('pageerror', (error) => pageErrors.push(String(error)))
  const apiCalls: Array<{ method: string; url: string; status: number }> = []
  page.on('response', (r) => {
    if (new URL(r.url()).pathname.startsWith('/v1/pets')) apiCalls.push({ method: r.request().method(), url: r.url(), status: r.status() })
  })
  await page.goto(`${server.url}/docs`, { waitUntil: 'load', timeout: 20_000 })
  await page.waitForSelector('.opblock', { timeout: 20_000 })
  assert.match(await page.title(), /Animal Store API/)

  // The first server is the relative one, so calls go to the origin the page was opened at.
  const servers = await page.$$eval('.servers select option', (options) => options.map((o) => (o as unknown as { value: string }).value))
  assert.equal(servers[0], '/v1', `servers offered: ${servers.join(', ')}`)

  await page.click('button.authorize')
  await page.fill('.modal-ux input[type=text], .modal-ux input[type=password]', key)
  await page.click('.modal-ux .auth-btn-wrapper button.authorize')
  await page.click('.modal-ux button.btn-done')

  const execute = async (operationId: string, body?: string): Promise<{ status: string; text: string }> => {
    const block = page.locator(`#operations-pets-${operationId}`)
    await block.locator('.opblock-summary').first().click()
    await block.locator('button.try-out__btn').click()
    if (body !== undefined) await block.locator('textarea.body-param__text').fill(body)
    await block.locator('button.execute').click()
    const row = block.locator('.live-responses-table .response').first()
    await row.waitFor({ timeout: 15_000 })
    const status = (await row.locator('.response-col_status').innerText()).trim()
    const text = await row.locator('.response-col_description').innerText()
    return { status, text }
  }

  const listed = await execute('listPets')
  assert.equal(listed.status, '200', listed.text)
  assert.ok(listed.text.includes(INT64_MAX), `the page shows ${INT64_MAX} exactly:\n${listed.text.slice(0, 500)}`)

  const created = await execute('createPet', `{"name":"From the console","categoryId":${INT64_MAX},"status":"available"}`)
  assert.equal(created.status, '201', created.text)
  assert.ok(created.text.includes('From the console'))
  assert.ok(created.text.includes(INT64_MAX), `the 201 shows ${INT64_MAX} exactly:\n${created.text.slice(0, 500)}`)

  // The calls went to this server, from the page, with the key.
  assert.deepEqual(
    apiCalls.map((c) => `${c.method} ${new URL(c.url).origin} ${c.status}`),
    [`GET ${server.url} 200`, `POST ${server.url} 201`],
  )
  assert.deepEqual(pageErrors, [], 'no script errors on the page')
})
