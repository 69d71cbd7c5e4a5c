/**
 * The console's Webhooks pages in a real browser, against a real server: an `admin` token is told
 * why a private URL is refused, creates an endpoint (its secret shown once, then gone), and on the
 * endpoint's page disables and enables it, rotates its secret (the new one shown once, the old one
 * signing until the time shown), edits it and deletes it; a `read` token sees the pages and no
 * change. A new endpoint's delivery log is there, empty (admin-console-deliveries.test.ts fills one).
 * Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureConsoleBuilt } from '../../helpers/console-build.js'
import { launchChromium } from '../helpers/browser.js'
import { followLink, openPage, pageLoaded, signIn } from '../helpers/console.js'
import { request, runCli, startServer, useTempDir } from '../helpers/process.js'

const URL_ = 'https://93.184.215.14/animal-store'

test('the console creates, disables, enables, rotates, edits and deletes a webhook endpoint', { timeout: 150_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  ensureConsoleBuilt()
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const token = async (name: string, role: string) => {
    const created = await runCli(['admin-tokens', 'create', '--name', name, '--role', role, '--json'], { db })
    assert.equal(created.code, 0, created.stderr)
    return JSON.parse(created.stdout).token as string
  }
  const ops = await token('ops', 'admin')
  const auditor = await token('auditor', 'read')
  const server = await startServer(t, { dir, db })
  const admin = server.adminUrl
  const api = async (path: string) => {
    const res = await request(`${admin}/admin/v1${path}`, { headers: { authorization: `Bearer ${ops}` } })
    return res
  }

  const page = await (await browser.newContext()).newPage()
  assert.equal(await signIn(page, admin, ops), 'signed in as ops (admin)')
  await followLink(page.locator('nav.top').getByRole('link', { name: 'Webhooks' }))
  await page.getByText('No webhook endpoint yet.').waitFor()
  const form = page.locator('form[aria-label="Create a webhook endpoint"]')

  // A private destination: the API's refusal, naming url and why.
  await form.locator('input[name=url]').fill('https://127.0.0.1/hook')
  await form.getByRole('button', { name: 'Create endpoint' }).click()
  await form
    .locator('[role=alert]')
    .getByText(/url must not point at a loopback address: 127\.0\.0\.1/)
    .waitFor()

  // Two event types instead of every type, and a description.
  await form.locator('input[name=url]').fill(URL_)
  await form.locator('input[name=description]').fill('Warehouse')
  await form.locator('input[name=every]').uncheck()
  await form.locator('input[name=event][value="order.placed"]').check()
  await form.locator('input[name=event][value="order.expired"]').check()
  await form.getByRole('button', { name: 'Create endpoint' }).click()
  await page.getByText(`The new signing secret of ${URL_}, shown this once.`).waitFor()
  const secret = (await page.locator('.secret-value').innerText()).trim()
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  const listed = (await api('/webhook-endpoints')).body as { data: Array<{ id: string; events: string[]; description: string }> }
  assert.equal(listed.data.length, 1)
  const [endpoint] = listed.data
  assert.deepEqual([endpoint!.events, endpoint!.description], [['order.placed', 'order.expired'], 'Warehouse'])
  const address = `#/webhooks/${endpoint!.id}`

  // Saved: the endpoint's page, where the secret is nowhere.
  await page.getByRole('button', { name: 'I have saved it' }).click()
  await pageLoaded(page, address)
  assert.equal(await page.locator('.secret-value').count(), 0)
  assert.equal((await page.content()).includes(secret.slice(6)), false, 'shown once only')
  await page.locator('[data-state="enabled"]').waitFor()
  await page.locator('section.deliveries').getByText('No deliveries yet.').waitFor()

  // Disable, then enable again.
  await page.getByRole('button', { name: 'Disable…' }).click()
  await page.getByRole('dialog', { name: 'Disable…' }).getByRole('button', { name: 'Disable' }).click()
  await page.locator('.page-head [data-state="disabled"]').getByText('disabled (manual)').waitFor()
  assert.deepEqual(
    (({ enabled, disabledReason }) => ({ enabled, disabledReason }))((await api(`/webhook-endpoints/${endpoint!.id}`)).body as never),
    { enabled: false, disabledReason: 'manual' },
  )
  await page.getByRole('button', { name: 'Enable…' }).click()
  await page.getByRole('dialog', { name: 'Enable…' }).getByRole('button', { name: 'Enable' }).click()
  await page.locator('.page-head [data-state="enabled"]').waitFor()

  // Rotate: the previous secret signs for a minute; the new one is shown here, once.
  await page.getByRole('button', { name: 'Rotate secret…' }).click()
  const rotate = page.getByRole('dialog', { name: 'Rotate secret…' })
  await rotate.locator('input[name=expiresInSeconds]').fill('60')
  await rotate.getByRole('button', { name: 'Rotate' }).click()
  await page.getByText('The new signing secret, shown this once.').waitFor()
  const rotated = (await page.locator('.secret-value').innerText()).trim()
  assert.match(rotated, /^whsec_/)
  assert.notEqual(rotated, secret)
  await page.getByText(/the previous one signs beside it until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/).waitFor()
  await page.getByRole('button', { name: 'I have saved it' }).click()
  assert.equal(await page.locator('.secret-value').count(), 0)

  // Edit: every type now, and no description.
  const edit = page.locator('form[aria-label="Edit the endpoint"]')
  await edit.locator('input[name=every]').check()
  await edit.locator('input[name=description]').fill('')
  await edit.getByRole('button', { name: 'Save changes' }).click()
  await edit.getByText('Saved.').waitFor()
  const edited = (await api(`/webhook-endpoints/${endpoint!.id}`)).body as { events: string[]; description: string | null }
  assert.deepEqual([edited.events, edited.description], [['*'], null])

  // A read token: the list and the page, no change offered.
  const reader = await (await browser.newContext()).newPage()
  assert.equal(await signIn(reader, admin, auditor, '#/webhooks'), 'signed in as auditor (read)')
  assert.equal(await reader.locator(`tr[data-endpoint-id="${endpoint!.id}"]`).count(), 1)
  assert.equal(await reader.locator('form[aria-label="Create a webhook endpoint"]').count(), 0)
  await openPage(reader, address)
  await reader.getByText('Signed in with a read token: this endpoint can be viewed, not changed.').waitFor()
  assert.equal(await reader.getByRole('button', { name: /Disable|Rotate|Delete/ }).count(), 0)

  // Delete: back to the list, which is empty, and the endpoint is gone.
  await page.getByRole('button', { name: 'Delete…' }).click()
  await page.getByRole('dialog', { name: 'Delete…' }).getByRole('button', { name: 'Delete' }).click()
  await pageLoaded(page, '#/webhooks')
  await page.getByText('No webhook endpoint yet.').waitFor()
  assert.equal((await api(`/webhook-endpoints/${endpoint!.id}`)).status, 404)
})
