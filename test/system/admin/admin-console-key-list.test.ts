/**
 * Issue 32, the console's keys, in a real browser in another time zone (TZ=America/New_York, an
 * en-US locale) against a real server: the keys list newest first with a state badge (a rotated key
 * in its grace period says until when, a key about to expire says in how long), created and expiry
 * columns, the display prefix beside the name (two keys of one name told apart); after a rotation
 * the "shown this once" banner on the new key's page only; the save confirmation old → new per
 * field; metadata set from the key page (invalid JSON refused before sending); the expiry typed as
 * UTC and sent as that UTC time whatever the browser's zone; the audit log opening newest first with
 * the reads hidden until asked for. Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { consoleService, followLink, openPage, pageLoaded, signIn } from '../helpers/console.js'
import { request } from '../helpers/process.js'

interface Key {
  id: string
  name: string
  prefix: string
  createdAt: string
  expiresAt: string | null
}

const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`

test('the console keys list, key page and audit log of issue 32, in a browser in New York', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t, { env: { TZ: 'America/New_York' } })
  if (browser === undefined) return
  const { token, admin, auth } = await consoleService(t)
  const createKey = async (body: Record<string, unknown>) => {
    const res = await request(`${admin}/admin/v1/keys`, { method: 'POST', headers: auth, body })
    assert.equal(res.status, 201, res.text)
    return (res.body as { apiKey: Key }).apiKey
  }
  const twinA = await createKey({ plan: 'pro', name: 'Twin' })
  const twinB = await createKey({ plan: 'pro', name: 'Twin' })
  const soon = await createKey({ plan: 'free', name: 'Soon', expiresAt: new Date(Date.now() + 3 * 60_000).toISOString() })
  const old = await createKey({ plan: 'pro', name: 'Rotating' })

  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1400, height: 900 } })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(String(error)))
  await signIn(page, admin, token)
  assert.equal(await page.evaluate('new Date(2030, 0, 1).getTimezoneOffset()'), 300, 'the browser runs in New York (UTC-5)')

  // Rotate from the key page: the new key's page opens with the banner; the old key's page has none.
  await openPage(page, `#/keys/${old.id}`)
  await page.getByRole('button', { name: 'Rotate…' }).click()
  await page.fill('input[name=grace]', '3600')
  await page.getByRole('dialog', { name: 'Rotate…' }).getByRole('button', { name: 'Rotate', exact: true }).click()
  await page.waitForURL((url) => url.hash.startsWith('#/keys/') && url.hash !== `#/keys/${old.id}`)
  const newId = decodeURIComponent(new URL(page.url()).hash.replace('#/keys/', ''))
  await pageLoaded(page, `#/keys/${newId}`)
  assert.match(await page.locator('.secret-value').innerText(), /^as_(live|test)_/)
  // A hash change keeps the previous key's page on screen until the next one has loaded (a busy CI
  // run read the new key's badge, 'active', here): the old key's page is read once it has loaded.
  await openPage(page, `#/keys/${old.id}`)
  assert.equal(await page.locator('.secret-value').count(), 0, "not on the old key's page")
  const oldBadge = page.locator(`.page-head[data-key-id="${old.id}"] .state`)
  assert.equal(await oldBadge.getAttribute('data-state'), 'rotated')
  assert.match(await oldBadge.innerText(), /^rotated \(works until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/)
  await openPage(page, `#/keys/${newId}`)
  assert.equal(await page.locator(`.page-head[data-key-id="${newId}"]`).count(), 1)
  assert.equal(await page.locator('.secret-value').count(), 0, 'shown once: gone when its page is left')

  // The list: newest first, its columns, the badges.
  const read = async (id: string) => (await request(`${admin}/admin/v1/keys/${id}`, { headers: auth })).body as Key
  const oldNow = await read(old.id)
  const keys = [twinA, twinB, soon, oldNow, await read(newId)]
  const expected = [...keys]
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0))
    .map((k) => k.id)
  assert.equal(expected[0], newId, 'the newest key first')
  await followLink(page.locator('nav.top').getByRole('link', { name: 'Keys' }))
  const listed = () => page.$$eval('table.keys tbody tr', (rows) => rows.map((r) => r.getAttribute('data-key-id')))
  assert.deepEqual(await listed(), expected, 'five keys, newest first')
  const headings = await page.locator('table.keys thead th').allInnerTexts()
  for (const h of ['Name', 'State', 'Created', 'Expires']) assert.ok(headings.includes(h), headings.join())
  const row = (id: string) => page.locator(`table.keys tr[data-key-id="${id}"]`)
  const badge = async (id: string) => {
    const b = row(id).locator('[data-column=state] .state')
    return [await b.getAttribute('data-state'), await b.innerText()]
  }
  assert.deepEqual(await badge(old.id), ['rotated', `rotated (works until ${utc(oldNow.expiresAt!)})`])
  assert.deepEqual(await badge(soon.id), ['expiring', 'expires in 3 min'])
  assert.deepEqual(await badge(newId), ['active', 'active'])
  assert.equal(await row(soon.id).locator('[data-column=expires]').innerText(), utc(soon.expiresAt!))
  assert.equal(await row(twinA.id).locator('[data-column=expires]').innerText(), 'never')
  assert.equal(await row(twinA.id).locator('[data-column=created]').innerText(), utc(twinA.createdAt))
  // Two keys named Twin: each name cell shows its own display prefix.
  assert.notEqual(twinA.prefix, twinB.prefix)
  assert.equal(await row(twinA.id).locator('td').first().innerText(), `Twin ${twinA.prefix}…`)
  assert.equal(await row(twinB.id).locator('td').first().innerText(), `Twin ${twinB.prefix}…`)

  // The new key's page: name, expiry typed in UTC, metadata; refused JSON never sent; old → new.
  await openPage(page, `#/keys/${newId}`)
  const edit = page.locator('form.edit')
  assert.equal(await edit.locator('input[name=expiresAt]').getAttribute('type'), null, 'a text input, not datetime-local')
  await edit.locator('textarea[name=metadata]').fill('{"customer": ')
  await edit.getByRole('alert').filter({ hasText: 'Metadata is not JSON' }).waitFor()
  assert.ok(await page.getByRole('button', { name: 'Save changes…' }).isDisabled())
  await edit.locator('textarea[name=metadata]').fill('["c_42"]')
  await edit.getByRole('alert').filter({ hasText: 'Metadata is a JSON object' }).waitFor()
  await edit.locator('input[name=expiresAt]').fill('2031-02-30 04:05')
  await edit.locator('textarea[name=metadata]').fill('{"customer": "c_42"}')
  await edit.getByRole('alert').filter({ hasText: 'YYYY-MM-DD HH:MM' }).waitFor()
  assert.ok(await page.getByRole('button', { name: 'Save changes…' }).isDisabled())
  await edit.locator('input[name=expiresAt]').fill('2031-02-03 04:05')
  await edit.locator('input[name=name]').fill('Rotated twice')
  await page.getByRole('button', { name: 'Save changes…' }).click()
  const dialog = page.getByRole('dialog', { name: 'Save changes' })
  const change = async (field: string) =>
    (await dialog.locator(`tr[data-field=${field}] td`).allInnerTexts()).map((s) => s.trim()).filter((s) => s !== '→')
  assert.deepEqual(await change('name'), ['Rotating', 'Rotated twice'])
  assert.deepEqual(await change('expiresAt'), ['never', '2031-02-03 04:05:00 UTC'])
  assert.deepEqual(await change('metadata'), ['none', '{"customer":"c_42"}'])
  assert.equal(await dialog.locator('tr').count(), 3, 'only the changed fields')
  assert.ok(!(await dialog.innerText()).includes('{"name"'), 'no raw JSON body')
  const sent = page.waitForRequest((r) => r.method() === 'PATCH')
  await dialog.getByRole('button', { name: 'Save', exact: true }).click()
  assert.deepEqual((await sent).postDataJSON(), {
    name: 'Rotated twice',
    expiresAt: '2031-02-03T04:05:00.000Z',
    metadata: { customer: 'c_42' },
  })
  await page.locator('dd[data-field=expires]', { hasText: '2031' }).waitFor()
  assert.equal(await page.locator('dd[data-field=expires]').innerText(), '2031-02-03 04:05:00 UTC')
  assert.equal(await page.locator('dd[data-field=metadata]').innerText(), '{"customer":"c_42"}')
  assert.equal(await edit.locator('input[name=expiresAt]').inputValue(), '2031-02-03 04:05', 'shown back in UTC')
  const saved = (await request(`${admin}/admin/v1/keys/${newId}`, { headers: auth })).body as Key & { metadata: unknown }
  assert.deepEqual([saved.name, saved.expiresAt, saved.metadata], ['Rotated twice', '2031-02-03T04:05:00.000Z', { customer: 'c_42' }])

  // The audit log opens newest first, reads hidden; "shown" brings them back.
  await followLink(page.locator('nav.top').getByRole('link', { name: 'Audit log' }))
  const seqs = async () => (await page.locator('table.audit tbody tr td:first-child').allInnerTexts()).map(Number)
  const shown = await seqs()
  assert.ok(shown.length > 3, `entries listed: ${shown}`)
  assert.deepEqual(
    shown,
    [...shown].sort((a, b) => b - a),
    'newest first',
  )
  assert.equal(await page.locator('table.audit tbody tr').first().getAttribute('data-action'), 'key.update', 'the latest change on top')
  assert.equal(await page.locator('table.audit tr.read').count(), 0, 'no read')
  assert.equal(await page.locator('select[name=order]').inputValue(), '')
  await page.selectOption('select[name=kind]', 'all')
  await pageLoaded(page, '#/audit?kind=all')
  assert.ok((await page.locator('table.audit tr.read').count()) > 0, 'the reads shown')
  assert.deepEqual(errors, [], 'no script error')
  await context.close()
})
