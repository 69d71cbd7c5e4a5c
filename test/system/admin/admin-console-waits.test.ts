/**
 * What the console's browser tests wait on (test/system/helpers/console.ts), in a real browser
 * against a real server, with the admin API's answers held back as a busy machine holds them:
 * signing in returns once the top bar is settled, so that a link pressed after it is not moved
 * under the pointer by a late answer; and a page is marked loaded only with its own address's
 * data, never while it still shows the address before. Needs Debian's chromium (playwright-core).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureConsoleBuilt } from '../../helpers/console-build.js'
import { launchChromium } from '../helpers/browser.js'
import { followLink, openPage, pageLoaded, signIn } from '../helpers/console.js'
import { request, runCli, sleep, startServer, useTempDir } from '../helpers/process.js'

/** How late the held answers come: far more than a quiet machine's press and release apart. */
const LATE_MS = 1000

/**
 * Records in window.seen every state the page is drawn in, as the DOM settles after each change (a
 * mutation observer's callback runs after the commit that made the change): the page's address,
 * whether it is marked loaded, and its orders' rows. A string: the tests have no DOM types.
 */
const RECORD_STATES = `(() => {
  const seen = []
  window.seen = seen
  new MutationObserver(() => {
    const shown = document.querySelector('.page')
    seen.push({
      address: shown ? shown.getAttribute('data-address') : null,
      loaded: shown ? shown.hasAttribute('data-loaded') : false,
      rows: [...document.querySelectorAll('table.orders tbody tr')].map((r) => r.getAttribute('data-order-id')),
    })
  }).observe(document.body, { subtree: true, childList: true, attributes: true })
})()`

test('the console tests wait for the state they act on, however late the answers', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  ensureConsoleBuilt()
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const created = await runCli(['admin-tokens', 'create', '--name', 'ops', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const token = JSON.parse(created.stdout).token as string
  const server = await startServer(t, { dir, db })
  const admin = server.adminUrl
  const made = await request(`${admin}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: { plan: 'pro', name: 'Buyer' },
  })
  assert.equal(made.status, 201, made.text)
  const headers = { authorization: `Bearer ${(made.body as { key: string }).key}` }
  const place = async () => {
    const pet = await request(`${server.url}/v1/pets`, {
      method: 'POST',
      headers,
      body: { name: 'Rex', categoryId: 1, status: 'available' },
    })
    assert.equal(pet.status, 201, pet.text)
    const order = await request(`${server.url}/v1/store/orders`, {
      method: 'POST',
      headers,
      body: { petId: (pet.body as { id: number }).id },
    })
    assert.equal(order.status, 201, order.text)
    return String((order.body as { id: number }).id)
  }
  const placed = await place()
  const completed = await place()
  const done = await request(`${server.url}/v1/store/orders/${completed}/complete`, { method: 'POST', headers })
  assert.equal(done.status, 200, done.text)

  await t.test('a link pressed after signing in is not moved away by who-am-I answering late', async () => {
    const page = await (await browser.newContext()).newPage()
    // Both GET /token, the sign-in's check and the top bar's "who am I", answer late: the bar shows
    // its links after the first and gains Create key (moving Orders) after the second.
    await page.route('**/admin/v1/token', async (route) => {
      await sleep(LATE_MS)
      await route.continue()
    })
    assert.equal(await signIn(page, admin, token), 'signed in as ops (admin)')
    // Held down longer than the answer takes, as a loaded machine spaces a press and its release:
    // had the bar moved in between, the release would land beside the link and nothing would open.
    await followLink(page.locator('nav.top').getByRole('link', { name: 'Orders' }), { delay: 2 * LATE_MS })
    const rows = await page.$$eval('table.orders tbody tr', (trs) => trs.map((r) => r.getAttribute('data-order-id')))
    assert.deepEqual(rows, [completed, placed], 'newest first')
    await page.context().close()
  })

  await t.test("a page is marked loaded only with its own address's data", async () => {
    const page = await (await browser.newContext()).newPage()
    await signIn(page, admin, token)
    await openPage(page, '#/orders')
    // Every state the page is drawn in, as the DOM settles after each change (a mutation observer's
    // callback runs after the commit that made the change).
    await page.evaluate(RECORD_STATES)
    // The completed orders answer late: the page shows the last rows under the new address meanwhile.
    await page.route(
      (url) => url.pathname.endsWith('/admin/v1/orders') && url.searchParams.get('status') === 'completed',
      async (route) => {
        await sleep(LATE_MS)
        await route.continue()
      },
    )
    await page.selectOption('select[name=status]', 'completed')
    await pageLoaded(page, '#/orders?status=completed')
    const rows = await page.$$eval('table.orders tbody tr', (trs) => trs.map((r) => r.getAttribute('data-order-id')))
    assert.deepEqual(rows, [completed])
    const seen = (await page.evaluate('window.seen')) as Array<{ address: string; loaded: boolean; rows: string[] }>
    const expected: Record<string, string[]> = { '#/orders': [completed, placed], '#/orders?status=completed': [completed] }
    assert.ok(
      seen.some((s) => s.address === '#/orders?status=completed' && !s.loaded && s.rows.join() === expected['#/orders']!.join()),
      `the last rows were seen under the new address, unmarked: ${JSON.stringify(seen)}`,
    )
    for (const state of seen.filter((s) => s.loaded))
      assert.deepEqual(state.rows, expected[state.address], `marked loaded with other rows: ${JSON.stringify(state)}`)
    await page.context().close()
  })
})
