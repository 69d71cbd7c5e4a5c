/**
 * The operator console with admin token roles, in a real browser against a real server: it says
 * who is signed in (the token's name and role), offers a `read` token no change (no Create key,
 * no key actions, no Cancel on an order) and an `admin` token every one, and the audit log names
 * the token of each entry (its id beside it). Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureConsoleBuilt } from '../../helpers/console-build.js'
import { launchChromium } from '../helpers/browser.js'
import { openPage, signIn } from '../helpers/console.js'
import { request, runCli, startServer, useTempDir } from '../helpers/process.js'

test('the console shows the signed-in token and offers a read token no change', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  ensureConsoleBuilt()
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const token = async (name: string, role: string) => {
    const created = await runCli(['admin-tokens', 'create', '--name', name, '--role', role, '--json'], { db })
    assert.equal(created.code, 0, created.stderr)
    return JSON.parse(created.stdout) as { token: string; adminToken: { id: string } }
  }
  const ops = await token('ops', 'admin')
  const viewer = await token('viewer', 'read')
  const server = await startServer(t, { dir, db })
  const admin = server.adminUrl
  const created = await request(`${admin}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ops.token}` },
    body: { plan: 'pro', name: 'Acme' },
  })
  assert.equal(created.status, 201, created.text)
  const { key, apiKey } = created.body as { key: string; apiKey: { id: string } }
  const pet = await request(`${server.url}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: { name: 'Rex', categoryId: 1, status: 'available' },
  })
  const order = await request(`${server.url}/v1/store/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: { petId: (pet.body as { id: number }).id },
  })
  assert.equal(order.status, 201, order.text)
  const orderId = (order.body as { id: number }).id

  const signedIn = async (secret: string, as: string) => {
    const page = await (await browser.newContext()).newPage()
    assert.equal(await signIn(page, admin, secret), as)
    return page
  }

  const read = await signedIn(viewer.token, 'signed in as viewer (read)')
  assert.equal(await read.locator('nav.top').getByRole('link', { name: 'Create key' }).count(), 0)
  assert.ok((await read.locator('table.keys tbody tr').count()) > 0, 'the key list is shown')
  assert.equal(await read.getByRole('link', { name: 'Create key' }).count(), 0, 'no Create key on the key list')
  await openPage(read, `#/keys/${apiKey.id}`)
  assert.equal(await read.getByText('Signed in with a read token').count(), 1)
  for (const name of ['Rotate…', 'Revoke…', 'Save changes…'])
    assert.equal(await read.getByRole('button', { name }).count(), 0, `no ${name} for a read token`)
  assert.deepEqual(await read.locator('dd[data-field=scopes] .scope-tag').allInnerTexts(), ['all'], 'its scopes shown')
  assert.equal(await read.locator('input[name=scope]').count(), 0, 'not offered to change')
  await openPage(read, '#/orders')
  assert.equal(await read.locator(`tr[data-order-id="${orderId}"]`).count(), 1)
  assert.equal(await read.getByRole('button', { name: 'Cancel…' }).count(), 0, 'no Cancel for a read token')
  await openPage(read, `#/audit?keyId=${apiKey.id}`)
  const name = read.locator('tr[data-action="key.create"] .actor-name')
  assert.match(await name.innerText(), new RegExp(`^ops ${ops.adminToken.id}$`))
  assert.equal(await name.getAttribute('title'), ops.adminToken.id)

  const full = await signedIn(ops.token, 'signed in as ops (admin)')
  assert.equal(await full.locator('nav.top').getByRole('link', { name: 'Create key' }).count(), 1)
  await openPage(full, '#/orders')
  assert.equal(await full.locator(`tr[data-order-id="${orderId}"]`).getByRole('button', { name: 'Cancel…' }).count(), 1)
})
