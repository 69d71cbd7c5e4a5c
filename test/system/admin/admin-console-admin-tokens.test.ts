/**
 * The console's Admin tokens page, in a real browser against a real server: an `admin` token
 * creates a `read` token (its secret shown once, its maker shown by name), signing in with it says
 * "(read)" and offers no change (no create form, no Revoke), and the admin token revokes it: the
 * next call with it is 401.
 * Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureConsoleBuilt } from '../../helpers/console-build.js'
import { launchChromium } from '../helpers/browser.js'
import { followLink, openPage, signIn } from '../helpers/console.js'
import { request, runCli, startServer, useTempDir } from '../helpers/process.js'

test('an admin token hands a colleague a read token from the console, then revokes it', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  ensureConsoleBuilt()
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const created = await runCli(['admin-tokens', 'create', '--name', 'ops', '--role', 'admin', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const ops = JSON.parse(created.stdout) as { token: string; adminToken: { id: string } }
  const server = await startServer(t, { dir, db })
  const admin = server.adminUrl

  const signedIn = async (secret: string, as: string) => {
    const page = await (await browser.newContext()).newPage()
    assert.equal(await signIn(page, admin, secret), as)
    return page
  }

  const full = await signedIn(ops.token, 'signed in as ops (admin)')
  await followLink(full.locator('nav.top').getByRole('link', { name: 'Admin tokens' }))
  assert.equal(await full.locator(`tr[data-admin-token-id="${ops.adminToken.id}"]`).getByText('ops (you)').count(), 1)
  assert.equal(
    await full.locator(`tr[data-admin-token-id="${ops.adminToken.id}"]`).getByRole('button', { name: 'Revoke…' }).count(),
    0,
    'no Revoke on the token signed in with',
  )
  await full.fill('form[aria-label="Create an admin token"] input[name=name]', 'auditor')
  await full.selectOption('form[aria-label="Create an admin token"] select[name=role]', 'read')
  await full.getByRole('button', { name: 'Create token' }).click()
  const secret = (await full.locator('.secret-value').innerText()).trim()
  assert.match(secret, /^as_admin_[0-9A-Za-z]{38}$/)
  await full.getByText('The new read admin token for “auditor”, shown this once.').waitFor()
  await full.getByRole('button', { name: 'I have saved it' }).click()
  assert.equal(await full.locator('.secret-value').count(), 0, 'the secret is gone once saved')
  const row = full.locator('tr', { hasText: 'auditor' })
  await row.getByText('active').waitFor()
  // Made by: the token signed in with, by name; the CLI's has none.
  assert.equal((await row.locator('td').nth(3).innerText()).trim(), 'ops')
  assert.equal((await full.locator(`tr[data-admin-token-id="${ops.adminToken.id}"] td`).nth(3).innerText()).trim(), 'CLI')
  assert.equal(await full.content().then((html) => html.includes(secret.slice(13))), false, 'shown once only')

  const read = await signedIn(secret, 'signed in as auditor (read)')
  await openPage(read, '#/admin-tokens')
  assert.equal(await read.locator(`tr[data-admin-token-id="${ops.adminToken.id}"]`).count(), 1)
  assert.equal(await read.locator('form[aria-label="Create an admin token"]').count(), 0, 'no create form for a read token')
  assert.equal(await read.getByRole('button', { name: 'Revoke…' }).count(), 0, 'no Revoke for a read token')
  assert.equal(await read.locator('nav.top').getByRole('link', { name: 'Create key' }).count(), 0)

  await row.getByRole('button', { name: 'Revoke…' }).click()
  await full.getByRole('button', { name: 'Revoke token' }).click()
  await row.getByText(/^revoked /).waitFor()
  const after = await request(`${admin}/admin/v1/token`, { headers: { authorization: `Bearer ${secret}` } })
  assert.equal(after.status, 401, after.text)
})
