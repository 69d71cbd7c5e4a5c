/**
 * The operator console's "Find a key" box in a real browser, against a real server: a whole key,
 * then a display prefix, opens the key's page (where revoke is), the key never in the address;
 * a secret that is no key's is said so. Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureConsoleBuilt } from '../../helpers/console-build.js'
import { launchChromium } from '../helpers/browser.js'
import { request, runCli, startServer, useTempDir, waitFor } from '../helpers/process.js'

test('the console finds a key by its secret or its prefix and opens its page', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  ensureConsoleBuilt()
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const created = await runCli(['admin-tokens', 'create', '--name', 'console test', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const token = JSON.parse(created.stdout).token as string
  const server = await startServer(t, { dir, db })
  const admin = server.adminUrl
  const newKey = async (name: string) => {
    const res = await request(`${admin}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: { plan: 'pro', name },
    })
    assert.equal(res.status, 201, res.text)
    return res.body as { key: string; apiKey: { id: string; prefix: string } }
  }
  const leaked = await newKey('Leaked')
  const other = await newKey('Other')

  const page = await (await browser.newContext()).newPage()
  await page.goto(`${admin}/admin/console`)
  await page.fill('input[name=token]', token)
  await page.click('button[type=submit]')
  const find = async (text: string) => {
    await page.waitForSelector('input[name=lookup]')
    await page.fill('input[name=lookup]', text)
    await page.press('input[name=lookup]', 'Enter')
  }
  const opened = async (id: string) =>
    assert.ok(await waitFor(() => page.url().endsWith(`#/keys/${id}`), 10_000), `the page of ${id} (at ${page.url()})`)

  await find(leaked.key)
  await opened(leaked.apiKey.id)
  assert.ok(!page.url().includes(leaked.key.slice(12)), 'the key is not in the address')
  await page
    .getByRole('button', { name: /Revoke/ })
    .first()
    .waitFor()

  await page.goto(`${admin}/admin/console#/keys`)
  await find(`${other.apiKey.prefix}…`)
  await opened(other.apiKey.id)

  await page.goto(`${admin}/admin/console#/keys`)
  await find(leaked.key.slice(0, -1) + (leaked.key.endsWith('A') ? 'B' : 'A'))
  assert.ok(await waitFor(async () => (await page.content()).includes('No key has this secret'), 10_000), 'said so')
})
