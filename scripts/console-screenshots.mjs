// Writes docs/images/console-keys.png and docs/images/console-key.png (npm run docs:screenshots):
// starts a server on a temporary SQLite file with an admin listener, creates sample keys and some
// traffic, and photographs the operator console in Debian's Chromium (playwright-core; CHROMIUM_PATH
// to use another). A server without the usage history operation gets the traffic this script sent,
// answered in that operation's shape by the browser itself, so that the picture shows a chart.
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
  // Traffic on the Enterprise key: 20 a minute, then refusals.
  const zoo = keys[3]
  const sent = { allowed: 0, rateLimited: 0, banned: 0 }
  for (let i = 0; i < 26; i++) {
    const res = await fetch(`${api}/v1/pets`, { headers: { authorization: `Bearer ${zoo.key}` } })
    const body = await res.json()
    if (res.ok) sent.allowed++
    else if (body.code === 'key_banned') sent.banned++
    else sent.rateLimited++
  }
  await fetch(`${api}/v1/pets`, { headers: { authorization: `Bearer ${rotated.key}` } })

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  const probe = await fetch(
    `${admin}/admin/v1/keys/${zoo.apiKey.id}/usage/history?granularity=hour&from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z`,
    {
      headers: { authorization: `Bearer ${token}` },
    },
  )
  if (probe.status === 404) {
    process.stdout.write('note: the server has no usage history operation; the chart shows the traffic sent, in its shape\n')
    await page.route('**/admin/v1/keys/*/usage/history?*', (route) => {
      const url = new URL(route.request().url())
      const step = url.searchParams.get('granularity') === 'minute' ? 60_000 : 3_600_000
      const now = Math.floor(Date.now() / step) * step
      const data = []
      for (let start = Date.parse(url.searchParams.get('from')); start < Date.parse(url.searchParams.get('to')); start += step) {
        const mine = start === now && url.pathname.includes(zoo.apiKey.id)
        const c = mine ? sent : { allowed: 0, rateLimited: 0, banned: 0 }
        data.push({ start: new Date(start).toISOString(), ...c, status2xx: c.allowed, status4xx: c.rateLimited + c.banned, status5xx: 0 })
      }
      return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ data }) })
    })
  }
  await page.goto(`${admin}/admin/console#token=${encodeURIComponent(token)}`)
  await page.waitForSelector('table.keys tbody tr')
  await page.screenshot({ path: join(OUT, 'console-keys.png'), fullPage: true })
  await page.goto(`${admin}/admin/console#/keys/${zoo.apiKey.id}`)
  await page.waitForSelector('.usage-chart .uplot canvas')
  await page.waitForSelector('table.audit')
  await page.screenshot({ path: join(OUT, 'console-key.png'), fullPage: true })
  process.stdout.write(`wrote ${join('docs', 'images', 'console-keys.png')} and ${join('docs', 'images', 'console-key.png')}\n`)
} finally {
  await browser?.close()
  server.kill('SIGTERM')
  await new Promise((r) => server.once('exit', r))
  rmSync(dir, { recursive: true, force: true })
}
