/**
 * The delivery log on the console's endpoint page, in a real browser against a real server that
 * delivers to a receiver on loopback (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true): a delivery that failed
 * twice then succeeded shows `delivered` with its three attempts (status codes and errors); Retry
 * now sends it once more; Replay sends every event since a time again. Needs Debian's chromium
 * (playwright-core).
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { consoleService, openPage, signIn } from '../helpers/console.js'
import { bearer, createKeyViaCli, request, waitFor } from '../helpers/process.js'

test('the console shows an endpoint’s deliveries and their attempts, retries one and replays', { timeout: 150_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const hits: string[] = []
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      hits.push(String(req.headers['webhook-id']))
      res.writeHead(hits.length <= 2 ? 500 : 204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    receiver.closeAllConnections()
    receiver.close()
  })
  const { db, server, admin, token, auth } = await consoleService(t, {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '100ms,100ms',
  })
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  const made = await request(`${admin}/admin/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: ['pet.created'] }),
  })
  assert.equal(made.status, 201, made.text)
  const endpointId = (made.body as { endpoint: { id: string } }).endpoint.id
  const since = new Date().toISOString()
  const { key } = await createKeyViaCli(db, { plan: 'pro', name: 'shop' })
  const pet = await request(`${server.url}/v1/pets`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  })
  assert.equal(pet.status, 201, pet.text)
  assert.ok(await waitFor(() => hits.length === 3, 30_000), `delivered on the third attempt (${hits.length} so far)`)

  const page = await (await browser.newContext()).newPage()
  await signIn(page, admin, token)
  await openPage(page, `#/webhooks/${endpointId}`)
  const log = page.locator('section.deliveries')
  const row = log.locator('tr[data-delivery-id]')
  await log.locator('tr[data-status="delivered"]').waitFor()
  assert.equal(await row.count(), 1)
  assert.match(await row.innerText(), /pet\.created\s+evt_\w+\s+delivered\s+3\s+204/)
  await row.getByRole('button', { name: 'Attempts' }).click()
  const attempts = log.locator('[data-attempts-of] tr[data-attempt]')
  await attempts.nth(2).waitFor()
  assert.deepEqual(
    (await attempts.allInnerTexts()).map((text) => text.split('\t').filter((_, i) => i === 0 || i === 3 || i === 4)),
    [
      ['1', '500', 'the receiver answered 500'],
      ['2', '500', 'the receiver answered 500'],
      ['3', '204', '—'],
    ],
  )

  await row.getByRole('button', { name: 'Retry now' }).click()
  await log.getByText(/^Delivery of evt_\w+ is due now\.$/).waitFor()
  assert.ok(await waitFor(() => hits.length === 4, 30_000), 'sent once more')
  assert.equal(hits[3], hits[0], 'the same webhook-id')

  await log.locator('input[name=since]').fill(`${since.slice(0, 10)} ${since.slice(11, 16)}`)
  await log.getByRole('button', { name: 'Replay' }).click()
  await log.getByText('1 deliveries are due now.').waitFor()
  assert.ok(await waitFor(() => hits.length === 5, 30_000), 'replayed')
})
