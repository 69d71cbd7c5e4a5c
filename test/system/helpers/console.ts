/**
 * Driving the operator console in a browser test: each step returns once the console shows the
 * state the next one acts on, read from what the console marks (console/src/page-state.tsx), never
 * from an element that the page before could also show.
 *
 * - signed in: the top bar says who ("signed in as NAME (ROLE)"). Until the admin API has said
 *   whose the token is, the bar lacks the role's links (Create key), and their arrival moves every
 *   link after them: a click pressed on Orders and released after the move lands on the bar itself,
 *   and the console stays on the page it showed (a CI run waited there for an order's row).
 * - a page loaded: the element around the page has the address it is drawn for and data-loaded
 *   once every load of that page has answered, in the same commit as what it drew.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { Locator, Page } from 'playwright-core'
import { CONSOLE_PATH } from '../../../src/admin/console.js'
import { ensureConsoleBuilt } from '../../helpers/console-build.js'
import { type EnvOverrides, runCli, type ServerProcess, startServer, useTempDir } from './process.js'

/** A CSS string's content: an address has no quote or backslash of its own, but a test's may. */
const cssString = (text: string) => text.replace(/["\\]/g, '\\$&')

/** The page shown, once it is drawn for `address` (`#/orders?status=placed`) with every answer it waits for. */
export async function pageLoaded(page: Page, address: string): Promise<void> {
  await page.locator(`.page[data-address="${cssString(address)}"][data-loaded]`).waitFor({ state: 'attached' })
}

/**
 * Opens the console of the admin listener `admin` at `address` in `page`, signs in with `token`,
 * and returns the top bar's "signed in as …" once it is there and the page at `address` has
 * loaded. A refused token fails with the sign-in screen's message.
 */
export async function signIn(page: Page, admin: string, token: string, address = '#/keys'): Promise<string> {
  await page.goto(`${admin}${CONSOLE_PATH}${address}`)
  await page.locator('input[name=token]').fill(token)
  await page.locator('button[type=submit]').click()
  const signedInAs = page.locator('nav.top .signed-in-as')
  await signedInAs.or(page.locator('main.sign-in [role=alert]')).waitFor()
  if (!(await signedInAs.isVisible())) assert.fail(`sign-in refused: ${await page.locator('main.sign-in [role=alert]').innerText()}`)
  await pageLoaded(page, address)
  return signedInAs.innerText()
}

/** Goes to `address` as the address bar would (the same document: no sign-in again), and returns once that page has loaded. */
export async function openPage(page: Page, address: string): Promise<void> {
  const url = new URL(page.url())
  url.hash = address
  await page.goto(url.href)
  await pageLoaded(page, address)
}

/**
 * Clicks `link` (an `<a href="#/…">` of the console) and returns once the page it names has loaded:
 * a click that did not navigate, or the last page still on screen, fails here rather than as a
 * missing row later. `click` is passed on (a test holds the button down with `delay`).
 */
export async function followLink(link: Locator, click: { delay?: number } = {}): Promise<string> {
  const address = await link.getAttribute('href')
  if (address === null || !address.startsWith('#/')) assert.fail(`not a link of the console: ${address}`)
  await link.click(click)
  await pageLoaded(link.page(), address)
  return address
}

/** What a console test runs against: a server on a new SQLite file and an admin token made with the CLI. */
export interface ConsoleService {
  dir: string
  db: string
  token: string
  server: ServerProcess
  /** The admin listener's origin. */
  admin: string
  /** The token's Authorization header, for calls the test makes itself. */
  auth: { authorization: string }
}

/** The console's bundle built, a server started on a new SQLite file (with `env`), and an admin token. */
export async function consoleService(t: TestContext, env?: EnvOverrides): Promise<ConsoleService> {
  ensureConsoleBuilt()
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const created = await runCli(['admin-tokens', 'create', '--name', 'console test', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const token = JSON.parse(created.stdout).token as string
  const server = await startServer(t, { dir, db, ...(env === undefined ? {} : { env }) })
  return { dir, db, token, server, admin: server.adminUrl, auth: { authorization: `Bearer ${token}` } }
}
