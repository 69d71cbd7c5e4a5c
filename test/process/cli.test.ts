/** The `animal-store keys` CLI, run as a real process against a real server on the same SQLite file. */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { bearer, childEnv, REVOCATION_DEADLINE_MS, ROOT, request, runCli, sleep, startServer, useTempDir } from '../helpers/process.js'

const LIVE_KEY = /^as_live_[0-9A-Za-z]{38}$/
const TEST_KEY = /^as_test_[0-9A-Za-z]{38}$/

test('keys create/list/revoke against a running server', { timeout: 45_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')

  // Created before the server starts, and after: both work at once.
  const before = await runCli(['keys', 'create', '--plan', 'free', '--name', 'a', '--json'], { db })
  assert.equal(before.code, 0, before.stderr)
  const server = await startServer(t, { dir, db })

  const created = await runCli(['keys', 'create', '--plan', 'free', '--name', 'a', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const lines = created.stdout.split('\n').filter((l) => l.trim() !== '')
  assert.equal(lines.length, 1, `exactly one line of JSON on stdout, got: ${created.stdout}`)
  const out = JSON.parse(lines[0]!) as Record<string, unknown>
  assert.equal(typeof out, 'object')
  assert.ok(!Array.isArray(out))
  assert.match(String(out.id), /^key_/)
  assert.match(String(out.key), LIVE_KEY)
  assert.equal(out.plan, 'free')
  const key = out.key as string
  const id = out.id as string
  assert.ok(key.startsWith(String(out.prefix)), 'prefix is the start of the key')

  for (const k of [key, JSON.parse(before.stdout).key as string]) {
    const res = await request(`${server.url}/v1/pets`, { headers: bearer(k) })
    assert.equal(res.status, 200, `a key just created works at once: ${res.text}`)
    assert.deepEqual(res.body, [])
  }

  // The human form also shows the key, once, and nothing else secret.
  const human = await runCli(['keys', 'create', '--plan', 'pro', '--name', 'human'], { db })
  assert.equal(human.code, 0, human.stderr)
  const humanKey = /as_live_[0-9A-Za-z]{38}/.exec(human.stdout)?.[0]
  assert.ok(humanKey, `human output shows the key: ${human.stdout}`)

  // list: prefixes, never a full key.
  const list = await runCli(['keys', 'list'], { db })
  assert.equal(list.code, 0, list.stderr)
  assert.ok(list.stdout.includes(String(out.prefix)), `list shows the prefix ${String(out.prefix)}:\n${list.stdout}`)
  assert.ok(list.stdout.includes(id))
  const listJson = await runCli(['keys', 'list', '--json'], { db })
  assert.equal(listJson.code, 0, listJson.stderr)
  const rows = JSON.parse(listJson.stdout) as Array<Record<string, unknown>>
  assert.equal(rows.length, 3)
  const row = rows.find((r) => r.id === id)
  assert.ok(row, 'the new key is listed')
  assert.equal(row.prefix, out.prefix)
  assert.equal(row.revokedAt, null)
  for (const k of [key, humanKey, JSON.parse(before.stdout).key as string]) {
    for (const text of [list.stdout, list.stderr, listJson.stdout, listJson.stderr]) {
      assert.ok(!text.includes(k), 'keys list never prints a full key')
      // Nor anything longer than the display prefix of it.
      assert.ok(!text.includes(k.slice(0, 16)), 'keys list prints no more than the display prefix')
    }
  }

  // revoke: 0; again: still 0 (idempotent), saying when it was revoked; an unknown id: 2, one line.
  const revoked = await runCli(['keys', 'revoke', id], { db })
  assert.equal(revoked.code, 0, revoked.stderr)
  const listAfter = JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout) as Array<Record<string, unknown>>
  const revokedAt = listAfter.find((r) => r.id === id)?.revokedAt
  assert.equal(typeof revokedAt, 'string', 'list shows the revocation')
  const again = await runCli(['keys', 'revoke', id], { db })
  assert.equal(again.code, 0, `a second revoke of the same id succeeds: ${again.stderr}`)
  assert.equal(again.stdout, `Key ${id} was already revoked (at ${String(revokedAt)}).\n`)
  assert.equal(again.stderr, '')
  const againJson = await runCli(['keys', 'revoke', id, '--json'], { db })
  assert.equal(againJson.code, 0, againJson.stderr)
  assert.deepEqual(JSON.parse(againJson.stdout), { id, revoked: true, alreadyRevokedAt: revokedAt })
  const listAgain = JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout) as Array<Record<string, unknown>>
  assert.equal(listAgain.find((r) => r.id === id)?.revokedAt, revokedAt, 'the first revocation time is kept')
  const unknown = await runCli(['keys', 'revoke', 'key_doesnotexist000'], { db })
  assert.equal(unknown.code, 2)
  assert.deepEqual(unknown.stderr.split('\n').filter(Boolean), [
    'animal-store: no key with id key_doesnotexist000 (node dist/cli.js keys list shows the ids)',
  ])

  const deadline = Date.now() + REVOCATION_DEADLINE_MS
  let status = 0
  while (Date.now() < deadline) {
    status = (await request(`${server.url}/v1/pets`, { headers: bearer(key) })).status
    if (status === 401) break
    await sleep(100)
  }
  assert.equal(status, 401, 'the revoked key is refused')
})

test('enterprise custom limits show in X-RateLimit-Limit', { timeout: 30_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const res = await runCli(
    ['keys', 'create', '--plan', 'enterprise', '--name', 'big', '--per-minute', '7', '--per-day', '5000', '--json'],
    { db },
  )
  assert.equal(res.code, 0, res.stderr)
  const out = JSON.parse(res.stdout) as { key: string; plan: string; perMinute: number; perDay: number }
  assert.equal(out.plan, 'enterprise')
  assert.equal(out.perMinute, 7)
  assert.equal(out.perDay, 5000)
  const server = await startServer(t, { dir, db })
  const first = await request(`${server.url}/v1/pets`, { headers: bearer(out.key) })
  assert.equal(first.status, 200, first.text)
  assert.equal(first.headers.get('x-ratelimit-limit'), '7')
  assert.equal(first.headers.get('x-ratelimit-remaining'), '6')
})

test('an enterprise day limit below the minute limit is accepted; the day window answers', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const res = await runCli(
    ['keys', 'create', '--plan', 'enterprise', '--name', 'trial', '--per-minute', '1000', '--per-day', '5', '--json'],
    { db },
  )
  assert.equal(res.code, 0, res.stderr)
  const out = JSON.parse(res.stdout) as { key: string; perMinute: number; perDay: number }
  assert.deepEqual([out.perMinute, out.perDay], [1000, 5])
  // Still refused: a limit that is not a positive integer, and custom limits on a fixed plan.
  const refused: Array<[string[], RegExp]> = [
    [['--plan', 'enterprise', '--per-minute', '1000', '--per-day', '0'], /--per-day must be an integer from 1/],
    [['--plan', 'enterprise', '--per-minute=-1000', '--per-day', '5'], /--per-minute must be a positive integer/],
    [['--plan', 'enterprise', '--per-minute', '1000', '--per-day', '2.5'], /--per-day must be a positive integer/],
    [['--plan', 'pro', '--per-minute', '1000', '--per-day', '5'], /enterprise plan only/],
  ]
  for (const [args, message] of refused) {
    const r = await runCli(['keys', 'create', '--name', 'no', ...args], { db })
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, message)
  }
  // Away from UTC midnight, so that the six requests share one day window.
  const untilMidnight = 86_400_000 - (Date.now() % 86_400_000)
  if (untilMidnight < 30_000) await new Promise((r) => setTimeout(r, untilMidnight + 200))
  const server = await startServer(t, { dir, db })
  for (let i = 1; i <= 5; i++) {
    const ok = await request(`${server.url}/v1/pets`, { headers: bearer(out.key) })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.headers.get('x-ratelimit-limit'), '5')
    assert.equal(ok.headers.get('x-ratelimit-remaining'), String(5 - i))
  }
  const sixth = await request(`${server.url}/v1/pets`, { headers: bearer(out.key) })
  assert.equal(sixth.status, 429)
  assert.equal((sixth.body as { code: string }).code, 'rate_limited')
  const dayEnd = Math.ceil(Date.now() / 86_400_000) * 86_400
  const retryAfter = Number(sixth.headers.get('retry-after'))
  assert.ok(Math.abs(Date.now() / 1000 + retryAfter - dayEnd) < 5, `Retry-After ${retryAfter} s ends with the UTC day`)
  assert.equal(sixth.headers.get('x-ratelimit-reset'), String(dayEnd))
})

test('keys: input errors exit 2 with a clear message on stderr', { timeout: 120_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const cases: Array<{ args: string[]; stderr: RegExp; why: string }> = [
    {
      args: ['keys', 'create', '--plan', 'free', '--name', 'a', '--per-minute', '100'],
      stderr: /--per-minute.*enterprise/i,
      why: '--per-minute on free',
    },
    {
      args: ['keys', 'create', '--plan', 'pro', '--name', 'a', '--per-day', '100'],
      stderr: /--per-day.*enterprise/i,
      why: '--per-day on pro',
    },
    {
      args: ['keys', 'create', '--plan', 'enterprise', '--name', 'a'],
      stderr: /enterprise.*--per-minute/i,
      why: 'enterprise without limits',
    },
    {
      args: ['keys', 'create', '--plan', 'enterprise', '--name', 'a', '--per-minute', '10'],
      stderr: /--per-day/,
      why: 'enterprise without --per-day',
    },
    {
      args: ['keys', 'create', '--plan', 'enterprise', '--name', 'a', '--per-minute', 'ten', '--per-day', '10'],
      stderr: /--per-minute/,
      why: 'non-numeric limit',
    },
    { args: ['keys', 'create', '--plan', 'gold', '--name', 'a'], stderr: /--plan.*gold/, why: 'bad plan' },
    { args: ['keys', 'create', '--name', 'a'], stderr: /--plan/, why: 'missing --plan' },
    { args: ['keys', 'create', '--plan', 'free'], stderr: /--name/, why: 'missing --name' },
    { args: ['keys', 'create', '--plan', 'free', '--name', '   '], stderr: /--name/, why: 'blank --name' },
    { args: ['keys', 'create', '--plan', 'free', '--name', 'a', '--colour', 'red'], stderr: /colour/, why: 'unknown option' },
    { args: ['keys', 'frobnicate'], stderr: /frobnicate/, why: 'unknown keys command' },
    { args: ['keys'], stderr: /create, list, show, update, rotate, revoke or usage/, why: 'keys without a command' },
    { args: ['keys', 'revoke'], stderr: /KEY_ID/, why: 'revoke without an id' },
    { args: ['frobnicate'], stderr: /unknown command "frobnicate"/, why: 'unknown command' },
    { args: [], stderr: /^$/, why: 'no command (usage on stdout)' },
  ]
  const results = await Promise.all(cases.map((c) => runCli(c.args, { db })))
  cases.forEach((c, i) => {
    const r = results[i]!
    assert.equal(r.code, 2, `${c.why}: exit 2 (got ${r.code}; stderr ${r.stderr})`)
    assert.match(r.stderr, c.stderr, `${c.why}: stderr names the problem`)
    if (c.args.length) assert.match(r.stderr, /Usage:/, `${c.why}: usage follows the message`)
    assert.doesNotMatch(r.stderr, /\n\s+at .*\(.*:\d+:\d+\)/, `${c.why}: no stack trace`)
    assert.doesNotMatch(r.stdout, /as_(live|test)_/, `${c.why}: no key created`)
  })
  assert.match(results.at(-1)!.stdout, /Usage:/)
  // Nothing was created by any of them.
  const list = await runCli(['keys', 'list', '--json'], { db })
  assert.equal(list.code, 0, list.stderr)
  assert.deepEqual(JSON.parse(list.stdout), [])
  const help = await runCli(['--help'], { db })
  assert.equal(help.code, 0)
  assert.match(help.stdout, /Usage:/)
})

test('--version prints the version in package.json, from src/ and from the build, whatever the configuration', {
  timeout: 30_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
  // A configuration that stops every other command: the version needs none.
  const env = { PORT: 'not-a-port' }
  const fromSource = await runCli(['--version'], { db: join(dir, 'store.db'), env })
  assert.deepEqual(
    { code: fromSource.code, stdout: fromSource.stdout, stderr: fromSource.stderr },
    { code: 0, stdout: `${version}\n`, stderr: '' },
  )
  // dist/ (built before the system tests) finds the same package.json, from any working directory.
  const built = await promisify(execFile)(process.execPath, [join(ROOT, 'dist/cli.js'), '--version'], {
    cwd: dir,
    env: childEnv({ DATABASE_URL: join(dir, 'store.db'), ...env }),
  })
  assert.deepEqual(built, { stdout: `${version}\n`, stderr: '' })
})

test('staging keys (as_test_) are refused by a production server on the same database', { timeout: 30_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const res = await runCli(['keys', 'create', '--plan', 'free', '--name', 'stg', '--json'], { db, env: { ANIMAL_STORE_ENV: 'staging' } })
  assert.equal(res.code, 0, res.stderr)
  const staging = JSON.parse(res.stdout) as { key: string }
  assert.match(staging.key, TEST_KEY)

  const production = await startServer(t, { dir, db, logFile: join(dir, 'prod.log') })
  const refused = await request(`${production.url}/v1/pets`, { headers: bearer(staging.key) })
  assert.equal(refused.status, 401, refused.text)
  assert.equal((refused.body as { code: string }).code, 'unauthorized')

  // The same key is fine on a staging server: the refusal is about the environment.
  const stagingServer = await startServer(t, { dir, db, logFile: join(dir, 'staging.log'), env: { ANIMAL_STORE_ENV: 'staging' } })
  const ok = await request(`${stagingServer.url}/v1/pets`, { headers: bearer(staging.key) })
  assert.equal(ok.status, 200, ok.text)
})
