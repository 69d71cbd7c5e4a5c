/**
 * The operator console's Orders page in a real browser, against a real server: newest first (the
 * oldest first on asking), each order with its key's name and its customer (issue 43: the oldest
 * came first, named by key id only), the status, key and customer filters narrow the list (kept in
 * the address), and Cancel, after a confirmation, makes the order cancelled and its animal
 * available again. Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.js'
import { consoleService, followLink, pageLoaded, signIn } from '../helpers/console.js'
import { request } from '../helpers/process.js'

test('the console lists, filters and cancels orders', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const { token, server, admin, auth } = await consoleService(t)
  const newKey = async (name: string) => {
    const res = await request(`${admin}/admin/v1/keys`, { method: 'POST', headers: auth, body: { plan: 'pro', name } })
    assert.equal(res.status, 201, res.text)
    return res.body as { key: string; apiKey: { id: string } }
  }
  const place = async (key: string) => {
    const headers = { authorization: `Bearer ${key}` }
    const pet = await request(`${server.url}/v1/pets`, {
      method: 'POST',
      headers,
      body: { name: 'Rex', categoryId: 1, status: 'available' },
    })
    assert.equal(pet.status, 201, pet.text)
    const petId = (pet.body as { id: number }).id
    const order = await request(`${server.url}/v1/store/orders`, { method: 'POST', headers, body: { petId } })
    assert.equal(order.status, 201, order.text)
    return { id: (order.body as { id: number }).id, petId }
  }
  const alice = await newKey('Alice')
  const bob = await newKey('Bob')
  const made = await request(`${admin}/admin/v1/customers`, { method: 'POST', headers: auth, body: { name: 'Acme', plan: 'pro' } })
  assert.equal(made.status, 201, made.text)
  const acme = made.body as { id: string }
  const acmeKey = await request(`${admin}/admin/v1/keys`, {
    method: 'POST',
    headers: auth,
    body: { name: 'Acme web', customerId: acme.id },
  })
  assert.equal(acmeKey.status, 201, acmeKey.text)
  const a = await place(alice.key)
  const b = await place(bob.key)
  const c = await place((acmeKey.body as { key: string }).key)
  const done = await request(`${server.url}/v1/store/orders/${b.id}/complete`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bob.key}` },
  })
  assert.equal(done.status, 200, done.text)

  const page = await (await browser.newContext()).newPage()
  await signIn(page, admin, token)
  await followLink(page.locator('nav.top').getByRole('link', { name: 'Orders' }))
  const rows = () => page.$$eval('table.orders tbody tr', (trs) => trs.map((r) => Number(r.getAttribute('data-order-id'))))
  assert.deepEqual(await rows(), [c.id, b.id, a.id], 'newest first')
  const cell = (order: number, column: string) => page.locator(`tr[data-order-id="${order}"] td[data-column=${column}]`)
  assert.equal(await cell(a.id, 'key').locator('a').innerText(), 'Alice')
  assert.match(await cell(a.id, 'key').innerText(), new RegExp(alice.apiKey.id))
  assert.equal(await cell(a.id, 'customer').innerText(), '—')
  assert.equal(await cell(c.id, 'key').locator('a').innerText(), 'Acme web')
  assert.equal(await cell(c.id, 'customer').innerText(), 'Acme')
  assert.equal(await cell(c.id, 'customer').locator('a').getAttribute('href'), `#/customers/${acme.id}`)
  await page.selectOption('select[name=order]', 'asc')
  await pageLoaded(page, '#/orders?order=asc')
  assert.deepEqual(await rows(), [a.id, b.id, c.id], 'oldest first, on asking')
  await page.selectOption('select[name=order]', '')
  await pageLoaded(page, '#/orders')
  await page.fill('input[name=customerId]', acme.id)
  await page.press('input[name=customerId]', 'Enter')
  await pageLoaded(page, `#/orders?customerId=${acme.id}`)
  assert.deepEqual(await rows(), [c.id], 'the customer’s orders only')
  await page.fill('input[name=customerId]', '')
  await page.press('input[name=customerId]', 'Enter')
  await pageLoaded(page, '#/orders')

  await page.selectOption('select[name=status]', 'completed')
  await pageLoaded(page, '#/orders?status=completed')
  assert.deepEqual(await rows(), [b.id])
  await page.selectOption('select[name=status]', '')
  await pageLoaded(page, '#/orders')
  await page.fill('input[name=keyId]', alice.apiKey.id)
  await page.press('input[name=keyId]', 'Enter')
  await pageLoaded(page, `#/orders?keyId=${alice.apiKey.id}`)
  assert.deepEqual(await rows(), [a.id])

  const row = page.locator(`tr[data-order-id="${a.id}"]`)
  await row.getByRole('button', { name: 'Cancel…' }).click()
  await row.getByRole('dialog', { name: 'Cancel…' }).getByRole('button', { name: 'Cancel order' }).click()
  await row.locator('.state-cancelled').waitFor()
  const pet = await request(`${server.url}/v1/pets/${a.petId}`, { headers: { authorization: `Bearer ${alice.key}` } })
  assert.equal((pet.body as { status: string }).status, 'available')
})
