/**
 * The operator console's "Find a key" box in a real browser, against a real server: a whole key,
 * then a display prefix, opens the key's page (where revoke is), the key never in the address;
 * a secret that is no key's is said so. Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { consoleService, openPage, pageLoaded, signIn } from '../helpers/console.js'
import { request } from '../helpers/process.js'

test('the console finds a key by its secret or its prefix and opens its page', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const { token, admin } = await consoleService(t)
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
  await signIn(page, admin, token)
  const find = async (text: string) => {
    await page.fill('input[name=lookup]', text)
    await page.press('input[name=lookup]', 'Enter')
  }

  await find(leaked.key)
  await pageLoaded(page, `#/keys/${leaked.apiKey.id}`)
  assert.ok(!page.url().includes(leaked.key.slice(12)), 'the key is not in the address')
  assert.ok((await page.getByRole('button', { name: /Revoke/ }).count()) > 0, 'Revoke is on its page')

  await openPage(page, '#/keys')
  await find(`${other.apiKey.prefix}…`)
  await pageLoaded(page, `#/keys/${other.apiKey.id}`)

  await openPage(page, '#/keys')
  await find(leaked.key.slice(0, -1) + (leaked.key.endsWith('A') ? 'B' : 'A'))
  await page.locator('form.find-key [role=alert]').filter({ hasText: 'No key has this secret' }).waitFor()
  assert.equal(new URL(page.url()).hash, '#/keys', 'no page opened')
})
