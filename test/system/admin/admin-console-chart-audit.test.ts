/**
 * Two small things of the key page, in a real browser against a real server (issue 43): the usage
 * chart's y axis tops at a labelled gridline at or above the tallest bar (uPlot's own scale ended
 * at the tallest bar, 9 requests, above the highest label, 8), and a revocation's audit row says
 * what it did (its Details cell was empty). Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { consoleService, openPage, signIn } from '../helpers/console.js'
import { request } from '../helpers/process.js'

/** Requests in the tallest minute: odd, so uPlot's own whole steps of 2 would label 8 and stop below it. */
const TALLEST = 9

test('the usage chart tops at a labelled gridline above its tallest bar; a revocation’s audit row says what it did', {
  timeout: 120_000,
}, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const { token, server, admin, auth } = await consoleService(t)
  const made = await request(`${admin}/admin/v1/keys`, { method: 'POST', headers: auth, body: { plan: 'free', name: 'Nine' } })
  assert.equal(made.status, 201, made.text)
  const { key, apiKey } = made.body as { key: string; apiKey: { id: string } }

  // All TALLEST requests in one clock minute: started early enough in it to end in it.
  if (new Date().getUTCSeconds() > 45) await new Promise((resolve) => setTimeout(resolve, (61 - new Date().getUTCSeconds()) * 1000))
  for (let i = 0; i < TALLEST; i++) {
    const res = await request(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
    assert.equal(res.status, 200, res.text)
  }
  const now = Date.now()
  const from = new Date(now - 3_600_000).toISOString()
  const to = new Date(now + 60_000).toISOString()
  const history = await request(`${admin}/admin/v1/keys/${apiKey.id}/usage/history?granularity=minute&from=${from}&to=${to}`, {
    headers: auth,
  })
  const buckets = (history.body as { data: Array<{ allowed: number; rateLimited: number; banned: number }> }).data
  assert.equal(Math.max(...buckets.map((b) => b.allowed + b.rateLimited + b.banned)), TALLEST, 'one minute holds every request')

  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  await signIn(page, admin, token, `#/keys/${apiKey.id}`)
  const plot = page.locator('.usage-chart .plot[data-y-labels]')
  await plot.waitFor()
  const labels = (await plot.getAttribute('data-y-labels'))!.split(' ').map(Number)
  const top = Number(await plot.getAttribute('data-y-top'))
  assert.ok(
    Math.max(...labels) >= TALLEST,
    `the highest labelled gridline (${labels.join(', ')}) is at or above the tallest bar, ${TALLEST}`,
  )
  assert.equal(top, Math.max(...labels), `the scale's top (${top}) is labelled (${labels.join(', ')})`)

  // Revoke from the key page: its audit row says what the revocation did.
  await page.getByRole('button', { name: 'Revoke…' }).click()
  await page.getByRole('dialog', { name: 'Revoke…' }).getByRole('button', { name: 'Revoke', exact: true }).click()
  await page.waitForSelector('.page-head .state-revoked')
  await openPage(page, `#/audit?keyId=${apiKey.id}`)
  const details = page.locator('table.audit tr[data-action="key.revoke"] td.details-text')
  assert.match(await details.innerText(), /^revoked \(no other key of its rotation chain was in its grace period\)$/)
})
