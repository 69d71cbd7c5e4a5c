/**
 * Issue 31, scoped keys in the console, in a real browser against a real server: the create form's
 * scope checkboxes (all checked; none refused before anything is sent; only the chosen scopes sent),
 * the list's badge of a key with fewer than all scopes, the key page's scopes and their change
 * through the key page's form (PATCH with `scopes`, the page showing the key as saved). Needs
 * Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { consoleService, followLink, openPage, signIn } from '../helpers/console.js'
import { request } from '../helpers/process.js'

test('the console creates a key with chosen scopes, marks it in the list and changes its scopes', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const { token, admin, auth } = await consoleService(t)
  const everything = await request(`${admin}/admin/v1/keys`, { method: 'POST', headers: auth, body: { plan: 'pro', name: 'Everything' } })
  assert.equal(everything.status, 201, everything.text)
  const everythingId = (everything.body as { apiKey: { id: string } }).apiKey.id

  const page = await (await browser.newContext()).newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(String(error)))
  await signIn(page, admin, token)
  await followLink(page.locator('nav.top').getByRole('link', { name: 'Create key' }))

  // The form: every scope checked, each with its meaning; none checked is refused on the page.
  const form = page.locator('form.edit')
  const scope = (name: string) => form.locator(`input[name=scope][value="${name}"]`)
  for (const name of ['pets:read', 'pets:write', 'orders:read', 'orders:write']) assert.ok(await scope(name).isChecked(), name)
  assert.match(await form.locator('fieldset.scope-choice').innerText(), /orders:write place, cancel and complete orders/)
  await form.locator('input[name=name]').fill('Catalogue reader')
  for (const name of ['pets:read', 'pets:write', 'orders:read', 'orders:write']) await scope(name).uncheck()
  await form.getByRole('alert').filter({ hasText: 'Choose at least one scope' }).waitFor()
  assert.ok(await form.getByRole('button', { name: 'Create…' }).isDisabled(), 'no key without a scope')
  await scope('pets:read').check()
  assert.equal(await form.getByRole('alert').count(), 0)
  await form.getByRole('button', { name: 'Create…' }).click()
  const confirm = page.getByRole('dialog', { name: 'Create key' })
  assert.match(await confirm.innerText(), /with the scopes pets:read only/)
  const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/admin/v1/keys'))
  await confirm.getByRole('button', { name: 'Create', exact: true }).click()
  assert.deepEqual((await sent).postDataJSON(), { name: 'Catalogue reader', plan: 'free', scopes: ['pets:read'] })
  await page.locator('.secret-value').waitFor()
  const keyLink = page.locator('main a', { hasText: 'Catalogue reader' })
  const id = /\((key_[0-9A-Za-z]+)\)/.exec(await keyLink.innerText())?.[1]
  assert.ok(id, 'the new key is linked')

  // The list: the new key is marked read-only, the key with every scope is not marked.
  await followLink(page.locator('nav.top').getByRole('link', { name: 'Keys' }))
  const badge = page.locator(`table.keys tr[data-key-id="${id}"] .scope-badge`)
  assert.deepEqual([await badge.getAttribute('data-scopes'), await badge.innerText()], ['read-only', 'read-only'])
  assert.equal(await page.locator(`table.keys tr[data-key-id="${everythingId}"] .scope-badge`).count(), 0)

  // The key with every scope says "all" on its page.
  await openPage(page, `#/keys/${everythingId}`)
  assert.deepEqual(await page.locator('dd[data-field=scopes] .scope-tag').allInnerTexts(), ['all'])

  // The new key's page: its scopes, changed through its form (old → new in the confirmation).
  await openPage(page, `#/keys/${id}`)
  assert.deepEqual(await page.locator('dd[data-field=scopes] .scope-tag').allInnerTexts(), ['pets:read'])
  const edit = page.locator('form.edit')
  assert.ok(await edit.locator('input[name=scope][value="pets:read"]').isChecked())
  assert.ok(!(await edit.locator('input[name=scope][value="pets:write"]').isChecked()))
  await edit.locator('input[name=scope][value="pets:read"]').uncheck()
  await edit.getByRole('alert').filter({ hasText: 'Choose at least one scope' }).waitFor()
  assert.ok(await page.getByRole('button', { name: 'Save changes…' }).isDisabled())
  await edit.locator('input[name=scope][value="pets:read"]').check()
  await edit.locator('input[name=scope][value="pets:write"]').check()
  await page.getByRole('button', { name: 'Save changes…' }).click()
  const dialog = page.getByRole('dialog', { name: 'Save changes' })
  const cells = (await dialog.locator('tr[data-field=scopes] td').allInnerTexts()).map((s) => s.trim()).filter((s) => s !== '→')
  assert.deepEqual(cells, ['pets:read', 'pets:read, pets:write'])
  const patched = page.waitForRequest((r) => r.method() === 'PATCH')
  await dialog.getByRole('button', { name: 'Save', exact: true }).click()
  assert.deepEqual((await patched).postDataJSON(), { scopes: ['pets:read', 'pets:write'] })
  await page.locator('dd[data-field=scopes] .scope-tag', { hasText: 'pets:write' }).waitFor()
  assert.deepEqual(await page.locator('dd[data-field=scopes] .scope-tag').allInnerTexts(), ['pets:read', 'pets:write'])

  const saved = await request(`${admin}/admin/v1/keys/${id}`, { headers: auth })
  assert.deepEqual((saved.body as { scopes: string[] }).scopes, ['pets:read', 'pets:write'])
  // Now it may add animals: no longer read-only, still scoped.
  await followLink(page.locator('nav.top').getByRole('link', { name: 'Keys' }))
  assert.equal(await page.locator(`table.keys tr[data-key-id="${id}"] .scope-badge`).getAttribute('data-scopes'), 'scoped')
  assert.deepEqual(errors, [])
})
