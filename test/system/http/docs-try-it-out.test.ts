/**
 * The docs console as a new user meets it: open /docs at the address the server listens on
 * (127.0.0.1, not the "localhost" of any configured base URL), authorize with a key, and run
 * listPets and createPet with "Try it out" — the calls must reach the API (same origin, no CORS),
 * the page must show the exact int64 values the API sent with the headers it sent, and the create
 * starts from a real example, not values made up from the schema's patterns.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { bearer, createKeyViaCli, request, startServer, useTempDir } from '../helpers/process.js'

const INT64_MAX = '9223372036854775807'

test('Try it out on /docs works from 127.0.0.1: authorize, listPets 200, createPet 201 from its example, int64 and headers shown as sent', {
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

  /** Opens the operation, presses "Try it out", and returns what its body editor holds then. */
  const tryOut = async (operationId: string): Promise<string | undefined> => {
    const block = page.locator(`#operations-pets-${operationId}`)
    await block.locator('.opblock-summary').first().click()
    await block.locator('button.try-out__btn').click()
    const editor = block.locator('textarea.body-param__text')
    return (await editor.count()) > 0 ? editor.inputValue() : undefined
  }
  const execute = async (operationId: string, body?: string): Promise<{ status: string; text: string; headers: string[] }> => {
    const block = page.locator(`#operations-pets-${operationId}`)
    if (body !== undefined) await block.locator('textarea.body-param__text').fill(body)
    await block.locator('button.execute').click()
    const row = block.locator('.live-responses-table .response').first()
    await row.waitFor({ timeout: 15_000 })
    const status = (await row.locator('.response-col_status').innerText()).trim()
    const text = await row.locator('.response-col_description').innerText()
    const headers = (await row.locator('.headerline').allInnerTexts()).map((line) => line.trim())
    return { status, text, headers }
  }

  await tryOut('listPets')
  const listed = await execute('listPets')
  assert.equal(listed.status, '200', listed.text)
  assert.ok(listed.text.includes(INT64_MAX), `the page shows ${INT64_MAX} exactly:\n${listed.text.slice(0, 500)}`)
  // The exact rendering changes the body pane only: the headers pane shows what the server sent.
  assert.ok(listed.headers.includes('content-type: application/json; charset=utf-8'), `headers shown: ${listed.headers.join(' | ')}`)

  // "Try it out" starts from the schema's examples.
  const example = await tryOut('createPet')
  assert.deepEqual(JSON.parse(example ?? 'null'), { name: 'Rex', categoryId: 7, status: 'available' })
  const fromExample = await execute('createPet')
  assert.equal(fromExample.status, '201', fromExample.text)
  assert.ok(fromExample.text.includes('"name": "Rex"'), fromExample.text.slice(0, 500))
  assert.ok(fromExample.headers.includes('content-type: application/json; charset=utf-8'), fromExample.headers.join(' | '))

  const created = await execute('createPet', `{"name":"From the console","categoryId":${INT64_MAX},"status":"available"}`)
  assert.equal(created.status, '201', created.text)
  assert.ok(created.text.includes('From the console'))
  assert.ok(created.text.includes(INT64_MAX), `the 201 shows ${INT64_MAX} exactly:\n${created.text.slice(0, 500)}`)
  assert.ok(created.headers.includes('content-type: application/json; charset=utf-8'), `headers shown: ${created.headers.join(' | ')}`)

  // The calls went to this server, from the page, with the key.
  assert.deepEqual(
    apiCalls.map((c) => `${c.method} ${new URL(c.url).origin} ${c.status}`),
    [`GET ${server.url} 200`, `POST ${server.url} 201`, `POST ${server.url} 201`],
  )
  assert.deepEqual(pageErrors, [], 'no script errors on the page')
})
