/** The `animal-store keys` CLI, run as a real process against a real server on the same SQLite file. */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import {
  bearer,
  type CliOptions,
  type CliResult,
  childEnv,
  REVOCATION_DEADLINE_MS,
  ROOT,
  request,
  runCli,
  sleep,
  startServer,
  useTempDir,
} from '../helpers/process.js'

const LIVE_KEY = /^as_live_[0-9A-Za-z]{38}$/
const TEST_KEY = /^as_test_[0-9A-Za-z]{38}$/

type CliFailure = Error & { code: number; stdout: string; stderr: string }

/** Runs the CLI once per argument list, a few at a time (many at once crawl on a busy machine). */
async function runEach(argLists: string[][], options: CliOptions, atOnce = 3): Promise<CliResult[]> {
  const results: CliResult[] = []
  for (let i = 0; i < argLists.length; i += atOnce)
    results.push(...(await Promise.all(argLists.slice(i, i + atOnce).map((args) => runCli(args, options)))))
  return results
}

test('keys create/list/revoke against a running server', { timeout: 180_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')

  // Created before the server starts, and after: both work at once.
  const before = await runCli(['keys', 'create', '--plan', 'free', '--name', 'a', '--json'], { db })
  assert.equal(before.code, 0, before.stderr)
  // Last-used times are written only when the server stops: the CLI's reads below compare a key's
  // view from two moments, and a flush landing between them changed its lastUsedAt (a flake).
  const server = await startServer(t, { dir, db, env: { LAST_USED_FLUSH_MS: '600000' } })

  const created = await runCli(['keys', 'create', '--plan', 'free', '--name', 'a', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const lines = created.stdout.split('\n').filter((l) => l.trim() !== '')
  assert.equal(lines.length, 1, `exactly one line of JSON on stdout, got: ${created.stdout}`)
  // The admin API's 201: the key, and the key's view.
  const { key, apiKey: out, ...rest } = JSON.parse(lines[0]!) as { key: string; apiKey: Record<string, unknown> }
  assert.deepEqual(rest, {})
  assert.match(String(out.id), /^key_/)
  assert.match(key, LIVE_KEY)
  assert.equal(out.plan, 'free')
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
  const rows = (JSON.parse(listJson.stdout) as { data: Array<Record<string, unknown>> }).data
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
  const listAfter = (JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout) as { data: Array<Record<string, unknown>> }).data
  const revokedAt = listAfter.find((r) => r.id === id)?.revokedAt
  assert.equal(typeof revokedAt, 'string', 'list shows the revocation')
  const again = await runCli(['keys', 'revoke', id], { db })
  assert.equal(again.code, 0, `a second revoke of the same id succeeds: ${again.stderr}`)
  assert.equal(again.stdout, `Key ${id} was already revoked (at ${String(revokedAt)}).\n`)
  assert.equal(again.stderr, '')
  const againJson = await runCli(['keys', 'revoke', id, '--json'], { db })
  assert.equal(againJson.code, 0, againJson.stderr)
  assert.deepEqual(JSON.parse(againJson.stdout), { apiKey: listAfter.find((r) => r.id === id), alreadyRevoked: true, alsoRevoked: [] })
  const listAgain = (JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout) as { data: Array<Record<string, unknown>> }).data
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
  const { key, apiKey } = JSON.parse(res.stdout) as { key: string; apiKey: { plan: string; perMinute: number; perDay: number } }
  assert.equal(apiKey.plan, 'enterprise')
  assert.equal(apiKey.perMinute, 7)
  assert.equal(apiKey.perDay, 5000)
  const server = await startServer(t, { dir, db })
  const first = await request(`${server.url}/v1/pets`, { headers: bearer(key) })
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
  const out = JSON.parse(res.stdout) as { key: string; apiKey: { perMinute: number; perDay: number } }
  assert.deepEqual([out.apiKey.perMinute, out.apiKey.perDay], [1000, 5])
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

test("input errors: one line naming the problem and a hint at the command's --help, exit 2, nothing done", {
  timeout: 300_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const create = ['keys', 'create']
  const cases: Array<{ args: string[]; stderr: RegExp; help: string; why: string }> = [
    {
      args: [...create, '--plan', 'free', '--name', 'a', '--per-minute', '100'],
      stderr: /--per-minute.*enterprise/i,
      help: 'keys create',
      why: '--per-minute on free',
    },
    {
      args: [...create, '--plan', 'pro', '--name', 'a', '--per-day', '100'],
      stderr: /--per-day.*enterprise/i,
      help: 'keys create',
      why: '--per-day on pro',
    },
    {
      args: [...create, '--plan', 'enterprise', '--name', 'a'],
      stderr: /enterprise.*--per-minute/i,
      help: 'keys create',
      why: 'enterprise without limits',
    },
    {
      args: [...create, '--plan', 'enterprise', '--name', 'a', '--per-minute', '10'],
      stderr: /--per-day/,
      help: 'keys create',
      why: 'enterprise without --per-day',
    },
    {
      args: [...create, '--plan', 'enterprise', '--name', 'a', '--per-minute', 'ten', '--per-day', '10'],
      stderr: /--per-minute/,
      help: 'keys create',
      why: 'non-numeric limit',
    },
    { args: [...create, '--plan', 'gold', '--name', 'a'], stderr: /--plan.*gold/, help: 'keys create', why: 'bad plan' },
    {
      args: [...create, '--name', 'a'],
      stderr: /^keys create needs --plan \(or --customer\)$/,
      help: 'keys create',
      why: 'missing --plan',
    },
    { args: [...create, '--plan', 'free'], stderr: /--name/, help: 'keys create', why: 'missing --name' },
    { args: [...create, '--plan', 'free', '--name', '   '], stderr: /--name/, help: 'keys create', why: 'blank --name' },
    {
      args: [...create, '--plan', 'free', '--name', 'a', '--colour', 'red'],
      stderr: /^unknown option --colour$/,
      help: 'keys create',
      why: 'unknown option',
    },
    {
      args: [...create, '--plan', 'free', '--name', 'a', '--name', 'b'],
      stderr: /^--name must be given once$/,
      help: 'keys create',
      why: 'a flag twice',
    },
    {
      args: [...create, '--plan', 'free', '--name'],
      stderr: /^--name needs a value$/,
      help: 'keys create',
      why: 'a flag without its value',
    },
    { args: ['keys', 'list', '--json=yes'], stderr: /^--json takes no value$/, help: 'keys list', why: 'a value to a switch' },
    {
      args: ['keys', 'show', 'key_a', '--grace', '5'],
      stderr: /^unknown option --grace$/,
      help: 'keys show',
      why: "another command's flag",
    },
    { args: ['keys', 'frobnicate'], stderr: /^unknown keys command "frobnicate"/, help: 'keys', why: 'unknown keys command' },
    { args: ['keys'], stderr: /create, list, show, lookup, update, rotate, revoke or usage$/, help: 'keys', why: 'keys without a command' },
    { args: ['keys', 'revoke'], stderr: /^keys revoke takes exactly one KEY_ID$/, help: 'keys revoke', why: 'revoke without an id' },
    {
      args: ['admin-tokens', 'create'],
      stderr: /^admin-tokens create needs --name$/,
      help: 'admin-tokens create',
      why: 'token without a name',
    },
    { args: ['serve', '--workers', 'two'], stderr: /^--workers must be a positive integer/, help: 'serve', why: 'bad --workers' },
    { args: ['frobnicate'], stderr: /^unknown command "frobnicate"/, help: '', why: 'unknown command' },
    { args: ['--json'], stderr: /^unknown option --json$/, help: '', why: 'unknown program flag' },
    { args: [], stderr: /^missing command: serve, keys, customers, admin-tokens or webhooks$/, help: '', why: 'no command' },
  ]
  const results = await runEach(
    cases.map((c) => c.args),
    { db },
  )
  cases.forEach((c, i) => {
    const r = results[i]!
    assert.equal(r.code, 2, `${c.why}: exit 2 (got ${r.code}; stderr ${r.stderr})`)
    const [line, hint, ...more] = r.stderr.split('\n')
    assert.match(line!, /^animal-store: /, `${c.why}: ${r.stderr}`)
    assert.match(line!.slice('animal-store: '.length), c.stderr, `${c.why}: stderr names the problem`)
    assert.equal(hint, `see: node dist/cli.js ${c.help ? `${c.help} ` : ''}--help`, `${c.why}: the hint`)
    assert.deepEqual(more, [''], `${c.why}: nothing more (no usage, no stack trace): ${r.stderr}`)
    assert.equal(r.stdout, '', `${c.why}: nothing on stdout`)
  })
  // Nothing was created by any of them.
  const list = await runCli(['keys', 'list', '--json'], { db })
  assert.equal(list.code, 0, list.stderr)
  assert.deepEqual(JSON.parse(list.stdout), { data: [], nextAfter: null })
})

test('--help of the program, of each group and of every command: usage on stdout, exit 0, no configuration read', {
  timeout: 300_000,
}, async () => {
  // A configuration that stops every command that reads it: help needs none.
  const broken = { db: '/proc/nope/x.db', env: { PORT: 'not-a-port' } }
  const commands = {
    '': [
      'serve',
      'keys create',
      'keys list',
      'keys show',
      'keys update',
      'keys rotate',
      'keys revoke',
      'keys usage',
      'admin-tokens create',
      'webhooks create',
      'webhooks rotate-secret',
    ],
    keys: ['create', 'list', 'show', 'update', 'rotate', 'revoke', 'usage'],
    'admin-tokens': ['create', 'list', 'revoke'],
    webhooks: ['create', 'list', 'show', 'update', 'delete', 'rotate-secret', 'deliveries', 'delivery', 'retry', 'replay'],
  }
  const helps: Array<{ args: string[]; usage: string; mentions: string[] }> = [
    { args: ['--help'], usage: 'Usage: node dist/cli.js COMMAND [options]', mentions: [...commands[''], '--version'] },
    { args: ['-h'], usage: 'Usage: node dist/cli.js COMMAND [options]', mentions: commands[''] },
    { args: ['help'], usage: 'Usage: node dist/cli.js COMMAND [options]', mentions: commands[''] },
    { args: ['keys', '--help'], usage: 'Usage: node dist/cli.js keys COMMAND [options]', mentions: commands.keys.map((c) => `keys ${c}`) },
    {
      args: ['admin-tokens', '-h'],
      usage: 'Usage: node dist/cli.js admin-tokens COMMAND [options]',
      mentions: commands['admin-tokens'].map((c) => `admin-tokens ${c}`),
    },
    { args: ['serve', '--help'], usage: 'Usage: node dist/cli.js serve [--workers N]', mentions: ['--workers N', '-h, --help'] },
    ...Object.entries(commands)
      .filter(([group]) => group !== '')
      .flatMap(([group, names]) =>
        names.map((name) => ({
          args: [group, name, '--help'],
          usage: `Usage: node dist/cli.js ${group} ${name} `,
          mentions: ['Options:', '-h, --help'],
        })),
      ),
    // --help wins over the rest, mistakes included: nothing is created.
    {
      args: ['keys', 'create', '--plan', 'free', '--name', 'x', '--colour', '--help'],
      usage: 'Usage: node dist/cli.js keys create --plan free|pro|business|enterprise --name NAME',
      mentions: ['--plan PLAN', '--name NAME', '--per-minute N', '--per-day M', '--expires-at ISO', '--metadata JSON', '--json'],
    },
    {
      args: ['keys', 'rotate', 'key_a', '-h'],
      usage: 'Usage: node dist/cli.js keys rotate KEY_ID --grace SECONDS',
      mentions: ['--grace SECONDS'],
    },
  ]
  const results = await runEach(
    helps.map((h) => h.args),
    broken,
  )
  helps.forEach((h, i) => {
    const r = results[i]!
    const what = h.args.join(' ')
    assert.deepEqual([r.code, r.stderr], [0, ''], `${what}: exit 0, nothing on stderr`)
    assert.ok(r.stdout.startsWith(h.usage), `${what}: starts with ${h.usage}:\n${r.stdout}`)
    for (const m of h.mentions) assert.ok(r.stdout.includes(m), `${what}: mentions ${m}:\n${r.stdout}`)
  })
})

test('run as the installed animal-store, its hints name animal-store', { timeout: 30_000 }, async (t) => {
  // What npm link or a dependency's node_modules/.bin makes: a link named animal-store to dist/cli.js.
  const dir = await useTempDir(t)
  const bin = join(dir, 'animal-store')
  symlinkSync(join(ROOT, 'dist/cli.js'), bin)
  const run = promisify(execFile)
  const env = childEnv({ DATABASE_URL: join(dir, 'store.db') })
  const refused = await run(process.execPath, [bin, 'keys', 'create', '--name', 'x'], { cwd: dir, env }).then(
    () => assert.fail('exit 0'),
    (e: CliFailure) => e,
  )
  assert.deepEqual(
    [refused.code, refused.stderr],
    [2, 'animal-store: keys create needs --plan (or --customer)\nsee: animal-store keys create --help\n'],
  )
  const help = await run(process.execPath, [bin, 'keys', 'create', '--help'], { cwd: dir, env })
  assert.match(help.stdout, /^Usage: animal-store keys create --plan/)
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
  // One server per SQLite file.
  await production.stop()

  // The same key is fine on a staging server: the refusal is about the environment.
  const stagingServer = await startServer(t, { dir, db, logFile: join(dir, 'staging.log'), env: { ANIMAL_STORE_ENV: 'staging' } })
  const ok = await request(`${stagingServer.url}/v1/pets`, { headers: bearer(staging.key) })
  assert.equal(ok.status, 200, ok.text)
})
