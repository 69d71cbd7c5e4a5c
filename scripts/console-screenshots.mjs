// Writes docs/images/console-keys.png, console-key.png and console-customer.png (npm run docs:screenshots):
// starts a server on a temporary SQLite file with an admin listener, creates sample keys and real
// traffic (over three minutes, so it takes about two: allowed requests, 429 rate_limited and, with
// BAN_THRESHOLD=3, 429 key_banned), and photographs the operator console in Debian's Chromium
// (playwright-core; CHROMIUM_PATH to use another). Nothing is stood in for: the chart and the
// busiest keys are what the server counted.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { buildConsole } from './build-console.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const OUT = join(ROOT, 'docs', 'images')
const TSX = fileURLToPath(import.meta.resolve('tsx'))
const dir = mkdtempSync(join(tmpdir(), 'console-screenshots-'))
const env = {
  ...process.env,
  ANIMAL_STORE_CONFIG_FILE: 'off',
  DATABASE_URL: join(dir, 'store.db'),
  LOG_FILE: join(dir, 'server.log'),
  BOOTSTRAP_KEY: 'false',
  LIMITER_STATE_FILE: 'off',
  HOST: '127.0.0.1',
  // A ban after 3 refusals in a minute, long enough to cover the next minute: all three outcomes.
  BAN_THRESHOLD: '3',
  BAN_BASE_SECONDS: '90',
  USAGE_FLUSH_MS: '1000',
}
delete env.REDIS_URL

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })

await buildConsole({ quiet: true })
const cli = spawnSync(process.execPath, ['--import', TSX, 'src/cli.ts', 'admin-tokens', 'create', '--name', 'docs', '--json'], {
  cwd: ROOT,
  env,
  encoding: 'utf8',
})
if (cli.status !== 0) throw new Error(cli.stderr)
const token = JSON.parse(cli.stdout).token
const [port, adminPort] = [await freePort(), await freePort()]
const server = spawn(process.execPath, ['--import', TSX, 'src/server.ts'], {
  cwd: ROOT,
  env: { ...env, PORT: String(port), ADMIN_PORT: String(adminPort) },
  stdio: 'ignore',
})
const api = `http://127.0.0.1:${port}`
const admin = `http://127.0.0.1:${adminPort}`
let browser
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${admin}/healthz`).catch(() => null))?.ok) break
    if (i > 300) throw new Error('the server did not start')
    await new Promise((r) => setTimeout(r, 100))
  }
  const call = async (method, path, body) => {
    const res = await fetch(`${admin}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }
  const samples = [
    { plan: 'business', name: 'Acme Logistics', metadata: { customer: 'c_1042' } },
    { plan: 'pro', name: 'Birdwatch Weekly' },
    { plan: 'free', name: 'Cat Facts (hobby)' },
    { plan: 'enterprise', name: 'Zoo Network', perMinute: 20, perDay: 5000, metadata: { contract: 'Z-2027' } },
    { plan: 'free', name: 'Old mobile app' },
  ]
  const keys = []
  for (const sample of samples) keys.push(await call('POST', '/keys', sample))
  await call('POST', `/keys/${keys[4].apiKey.id}/revoke`)
  const rotated = await call('POST', `/keys/${keys[1].apiKey.id}/rotate`, { gracePeriodSeconds: 86_400 })
  // A customer with two keys that share its quota (issue 31): its page shows both and one chart.
  const initech = await call('POST', '/customers', { name: 'Initech', plan: 'pro', metadata: { account: 'A-1042' } })
  const initechKeys = [
    await call('POST', '/keys', { name: 'Initech web', customerId: initech.id }),
    await call('POST', '/keys', { name: 'Initech batch', customerId: initech.id }),
  ]
  const send = async (key, n) => {
    const seen = { allowed: 0, rateLimited: 0, banned: 0 }
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${api}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
      const body = await res.json()
      if (res.ok) seen.allowed++
      else if (body.code === 'key_banned') seen.banned++
      else if (body.code === 'rate_limited') seen.rateLimited++
      else throw new Error(`unexpected answer ${res.status} ${JSON.stringify(body)}`)
    }
    return seen
  }
  const nextMinute = () => new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 200))
  // The Enterprise key (20 a minute) over three minutes: within its limit; over it until banned,
  // then refused while banned; still banned in the third.
  const zoo = keys[3]
  const sent = [await send(zoo.key, 12)]
  await send(keys[0].key, 9)
  await send(rotated.key, 4)
  await send(keys[2].key, 1)
  await send(initechKeys[0].key, 7)
  await send(initechKeys[1].key, 5)
  await nextMinute()
  sent.push(await send(zoo.key, 28))
  await nextMinute()
  sent.push(await send(zoo.key, 8))
  process.stdout.write(`traffic on ${zoo.apiKey.name}, minute by minute: ${JSON.stringify(sent)}\n`)

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  await page.goto(`${admin}/admin/console#token=${encodeURIComponent(token)}`)
  await page.waitForSelector('table.keys tbody tr')
  await page.waitForSelector('.top-keys tbody tr')
  await page.screenshot({ path: join(OUT, 'console-keys.png'), fullPage: true })
  await page.goto(`${admin}/admin/console#/keys/${zoo.apiKey.id}`)
  await page.waitForSelector('.usage-chart .uplot canvas')
  await page.waitForSelector('table.audit')
  // The cursor on the busiest minute (the one before the current one: 60 minutes drawn, 61 points
  // with the range's end), so that the legend shows its counts.
  const over = page.locator('.usage-chart .u-over')
  const box = await over.boundingBox()
  await over.hover({ position: { x: (box.width * 58) / 60, y: box.height / 2 } })
  await page.screenshot({ path: join(OUT, 'console-key.png'), fullPage: true })
  await page.goto(`${admin}/admin/console#/customers/${initech.id}`)
  await page.waitForSelector('table.customer-keys tbody tr')
  await page.waitForSelector('.usage-chart .uplot canvas')
  await page.screenshot({ path: join(OUT, 'console-customer.png'), fullPage: true })
  process.stdout.write(
    `wrote ${['console-keys.png', 'console-key.png', 'console-customer.png'].map((f) => join('docs', 'images', f)).join(', ')}\n`,
  )
} finally {
  await browser?.close()
  server.kill('SIGTERM')
  await new Promise((r) => server.once('exit', r))
  rmSync(dir, { recursive: true, force: true })
}
