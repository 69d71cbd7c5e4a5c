/**
 * Customers in the operator console, in a real browser against a real server (issue 43): the keys
 * list names each key's customer, linked; a customer's key page names it, says that the windows
 * shown are the customer's quota shared by its N active keys and that the chart is the key's own,
 * and offers no plan or limits to change but a link to the customer; the customer page says how
 * many keys share its quota, lists them, and changes the customer (name, plan, limits, metadata)
 * after a confirmation, which every key of it takes. A key without a customer keeps its own plan
 * and limits, editable. Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { consoleService, followLink, openPage, pageLoaded, signIn } from '../helpers/console.js'
import { request } from '../helpers/process.js'

interface Key {
  id: string
  name: string
  plan: string
  perMinute: number
  customerId: string | null
}

test('the console shows a key’s customer, its shared quota, and changes the customer on its page', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const { token, admin, auth } = await consoleService(t)
  const call = async (method: string, path: string, body?: Record<string, unknown>) => {
    const res = await request(`${admin}/admin/v1${path}`, { method, headers: auth, body })
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`)
    return res.body as Record<string, unknown>
  }
  const initech = (await call('POST', '/customers', { name: 'Initech', plan: 'pro', metadata: { account: 'A-1042' } })) as { id: string }
  const web = ((await call('POST', '/keys', { name: 'Initech web', customerId: initech.id })) as { apiKey: Key }).apiKey
  const batch = ((await call('POST', '/keys', { name: 'Initech batch', customerId: initech.id })) as { apiKey: Key }).apiKey
  const gone = ((await call('POST', '/keys', { name: 'Initech old', customerId: initech.id })) as { apiKey: Key }).apiKey
  await call('POST', `/keys/${gone.id}/revoke`)
  const plain = ((await call('POST', '/keys', { name: 'Plain', plan: 'free' })) as { apiKey: Key }).apiKey

  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(String(error)))
  await signIn(page, admin, token)

  // The keys list: each key's customer by name, linked to its page; none for a key without one.
  const customerCell = (id: string) => page.locator(`table.keys tr[data-key-id="${id}"] td[data-column=customer]`)
  assert.equal(await customerCell(web.id).innerText(), 'Initech')
  assert.equal(await customerCell(web.id).locator('a').getAttribute('href'), `#/customers/${initech.id}`)
  assert.equal(await customerCell(plain.id).innerText(), '—')

  // A customer's key: its customer named and linked; the windows are the customer's, shared by its
  // 2 active keys (the revoked one spends nothing); the chart is the key's own.
  await followLink(page.locator(`table.keys tr[data-key-id="${web.id}"] td a`).first())
  assert.match(await page.locator('dd[data-field=customer]').innerText(), /^Initech \(its plan, limits and quota\)$/)
  const shared = page.locator('.current-usage .shared-quota')
  assert.equal(await shared.getAttribute('data-shared-by'), '2')
  assert.match(await shared.innerText(), /Initech’s, shared by its 2 active keys/)
  assert.match(await page.locator('.current-usage h2').innerText(), /customer’s quota/)
  assert.equal(await page.locator('.usage-chart h2').innerText(), 'This key’s requests over time')
  // Plan and limits are the customer's: not offered here, with the way to the customer.
  const edit = page.locator('form.edit')
  for (const field of ['select[name=plan]', 'input[name=perMinute]', 'input[name=perDay]'])
    assert.equal(await edit.locator(field).isDisabled(), true, `${field} is disabled on a customer's key`)
  assert.equal(await edit.locator('input[name=name]').isDisabled(), false, 'the key’s own name is still its own')
  const toCustomer = edit.locator('.customer-owned a')
  assert.equal(await toCustomer.innerText(), 'Initech’s page')

  // The customer page: its quota shared by 2 keys, its 3 keys, and its form.
  await followLink(toCustomer)
  assert.equal(await page.locator('dd[data-field=quota]').getAttribute('data-shared-by'), '2')
  assert.match(await page.locator('dd[data-field=quota]').innerText(), /shared by its 2 active keys/)
  const keyRows = await page.$$eval('table.customer-keys tbody tr', (rows) => rows.map((r) => r.getAttribute('data-key-id')))
  assert.deepEqual(new Set(keyRows), new Set([web.id, batch.id, gone.id]))
  assert.equal(await page.locator('a.button', { hasText: 'Its orders' }).getAttribute('href'), `#/orders?customerId=${initech.id}`)

  const form = page.locator('form.customer-edit')
  assert.equal(await form.locator('input[name=perMinute]').isDisabled(), true, 'a Pro customer has the plan’s limits')
  await form.locator('input[name=name]').fill('Initech Corp')
  await form.locator('select[name=plan]').selectOption('enterprise')
  await form.locator('input[name=perMinute]').fill('900')
  await form.locator('input[name=perDay]').fill('90000')
  await form.locator('textarea[name=metadata]').fill('{"account": "A-2048"}')
  await form.getByRole('button', { name: 'Save changes…' }).click()
  const dialog = form.getByRole('dialog', { name: 'Save changes' })
  assert.match(await dialog.locator('p').first().innerText(), /apply to its 2 active keys/)
  const change = async (field: string) => dialog.locator(`tr[data-field=${field}] td.old, tr[data-field=${field}] td.new`).allInnerTexts()
  assert.deepEqual(await change('name'), ['Initech', 'Initech Corp'])
  assert.deepEqual(await change('plan'), ['pro', 'enterprise'])
  assert.deepEqual(await change('perMinute'), ['300', '900'])
  assert.deepEqual(await change('metadata'), ['{"account":"A-1042"}', '{"account":"A-2048"}'])
  await dialog.getByRole('button', { name: 'Save', exact: true }).click()
  await form.locator('.ok').waitFor()
  await page.locator('.page-head h1', { hasText: 'Initech Corp' }).waitFor()
  const saved = await call('GET', `/customers/${initech.id}`)
  assert.deepEqual(
    [saved.name, saved.plan, saved.perMinute, saved.perDay, saved.metadata],
    ['Initech Corp', 'enterprise', 900, 90_000, { account: 'A-2048' }],
  )
  // Every key of the customer took the plan.
  const webNow = (await call('GET', `/keys/${web.id}`)) as unknown as Key
  assert.deepEqual([webNow.plan, webNow.perMinute], ['enterprise', 900])
  await openPage(page, `#/keys/${web.id}`)
  assert.equal(await page.locator('dd[data-field=limits]').innerText(), '900 / minute, 90,000 / day')
  assert.match(await page.locator('dd[data-field=customer]').innerText(), /^Initech Corp/)

  // A key without a customer: its own plan and limits, offered as before.
  await openPage(page, `#/keys/${plain.id}`)
  assert.match(await page.locator('dd[data-field=customer]').innerText(), /^none/)
  assert.equal(await page.locator('.current-usage .shared-quota').count(), 0)
  assert.equal(await page.locator('form.edit select[name=plan]').isDisabled(), false)
  assert.equal(await page.locator('form.edit .customer-owned').count(), 0)
  assert.equal(await page.locator('.usage-chart h2').innerText(), 'Usage over time')
  await pageLoaded(page, `#/keys/${plain.id}`)
  assert.deepEqual(errors, [])
})
