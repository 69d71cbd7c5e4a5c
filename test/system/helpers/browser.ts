import { existsSync } from 'node:fs'
import type { TestContext } from 'node:test'
import type { Browser } from 'playwright-core'
import { missingPrerequisite } from '../../helpers/services.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const MUST_RUN = Boolean(process.env.CI) || Boolean(process.env.REQUIRE_SERVICES)

/**
 * Debian's Chromium driven by playwright-core (no browser download), closed after the test.
 * Missing Chromium: a loud skip locally, a failure in CI. Undefined when skipped. `env` is added to
 * the browser's environment (TZ=America/New_York: a browser in another time zone than UTC).
 */
export async function launchChromium(t: TestContext, options: { env?: Record<string, string> } = {}): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    missingPrerequisite(t, `${CHROMIUM} not found (apt-get install chromium)`, MUST_RUN)
    return undefined
  }
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    timeout: 30_000,
    ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
    // Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  })
  t.after(() => browser.close())
  return browser
}
