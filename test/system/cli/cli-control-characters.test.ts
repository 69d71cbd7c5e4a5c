/**
 * Control characters never reach the operator's terminal through the CLI: names with them are
 * refused (one input error, exit 2), and text stored with them anyway (before they were refused,
 * or by another way into the database) is printed escaped, so it cannot clear the screen or forge
 * a row.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ALL_SCOPES } from '../../../src/shared/scopes.js'
import { SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js'
import { createKeyViaCli, runCli, useTempDir } from '../helpers/process.js'

/** A screen clear, then a newline and a row of `keys list` that is not in the database. */
const FORGED_ROW = 'evil\u001b[2J\u001b[H\nkey_AAAAAAAAAAAAAAAA  as_live_AAAA…  free  active  trusted'
const REFUSED = 'animal-store: --name must not contain control characters (U+0000–U+001F, U+007F–U+009F)\n'
/** Every control character but the newline that ends each line the CLI writes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what the test looks for
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u

test('keys create, keys update and admin-tokens create refuse a --name with control characters: exit 2, nothing stored', async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { id } = await createKeyViaCli(db, { name: 'good' })
  const runs = await Promise.all(
    [
      ['keys', 'create', '--plan', 'free', '--name', FORGED_ROW],
      ['keys', 'create', '--plan', 'free', '--name', 'csi \u009b2J'],
      ['keys', 'update', id, '--name', FORGED_ROW],
      ['admin-tokens', 'create', '--name', 'title \u001b]0;pwned\u0007'],
    ].map((args) => runCli(args, { db })),
  )
  for (const run of runs) {
    assert.equal(run.code, 2, run.stderr)
    assert.ok(run.stderr.startsWith(REFUSED), run.stderr)
    assert.doesNotMatch(run.stderr + run.stdout, CONTROL)
  }
  const keys = JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout)
  assert.deepEqual(
    keys.data.map((k: { name: string }) => k.name),
    ['good'],
  )
  assert.deepEqual(JSON.parse((await runCli(['admin-tokens', 'list', '--json'], { db })).stdout), { data: [] })
})

test('names and metadata stored with control characters are printed escaped by keys list, keys show and admin-tokens list', async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const storage = new SqliteStorage({ databaseUrl: db, durability: 'process' })
  const id = 'key_0000000000000001'
  const metadata = { note: 'c1 \u009b2J', 'key\u001b': 'x' }
  try {
    // Straight into storage, past the service's checks: as a row stored before they existed.
    await storage.keys.insertKey({
      id,
      name: FORGED_ROW,
      plan: 'free',
      perMinute: 60,
      perDay: 1000,
      prefix: 'as_live_AAAA',
      quotaId: id,
      createdAt: 0,
      updatedAt: 0,
      expiresAt: null,
      revokedAt: null,
      rotatedTo: null,
      rotatedFrom: null,
      metadata,
      customerId: null,
      scopes: [...ALL_SCOPES],
      lastUsedAt: null,
      hash: '0'.repeat(64),
    })
    await storage.adminTokens.insert({
      id: 'adm_0000000000000001',
      name: FORGED_ROW,
      hash: '1'.repeat(64),
      prefix: 'as_admin_AAAA',
      role: 'admin' as const,
      createdBy: null,
      createdAt: 0,
      revokedAt: null,
    })
  } finally {
    await storage.close()
  }
  const escapedName = 'evil\\u001b[2J\\u001b[H\\u000akey_AAAAAAAAAAAAAAAA  as_live_AAAA…  free  active  trusted'

  const list = await runCli(['keys', 'list'], { db })
  assert.equal(list.code, 0, list.stderr)
  assert.doesNotMatch(list.stdout, CONTROL)
  const [header, ...rows] = list.stdout.split('\n')
  assert.match(header!, /^ID {2}/)
  assert.match(rows[0]!, /^key_0000000000000001 {2}as_live_AAAA… {2}free .* active {2}/)
  assert.ok(list.stdout.endsWith(`  active  ${escapedName}\n`), list.stdout)
  assert.deepEqual(rows.length, 2, 'one row (and the final newline), none forged')

  const show = await runCli(['keys', 'show', id], { db })
  assert.equal(show.code, 0, show.stderr)
  assert.doesNotMatch(show.stdout, CONTROL)
  assert.ok(show.stdout.split('\n').includes(`${'Name:'.padEnd(14)}${escapedName}`), show.stdout)
  assert.match(show.stdout, /^Metadata: +\{"note":"c1 \\u009b2J","key\\u001b":"x"\}$/m)

  const tokens = await runCli(['admin-tokens', 'list'], { db })
  assert.equal(tokens.code, 0, tokens.stderr)
  assert.doesNotMatch(tokens.stdout, CONTROL)
  assert.equal(tokens.stdout.split('\n')[1], `adm_0000000000000001  as_admin_AAAA…  admin  cli      active  ${escapedName}`)
  assert.equal(tokens.stdout.split('\n').length, 3, 'a header, one row, none forged')

  // JSON output escapes them too, and still means the same.
  for (const args of [
    ['keys', 'show', id, '--json'],
    ['keys', 'list', '--json'],
    ['admin-tokens', 'list', '--json'],
  ]) {
    const json = await runCli(args, { db })
    assert.equal(json.code, 0, json.stderr)
    assert.doesNotMatch(json.stdout, CONTROL, args.join(' '))
    assert.ok(json.stdout.includes('\\u009b') || args[0] === 'admin-tokens', args.join(' '))
    const parsed = JSON.parse(json.stdout)
    const named = (parsed.data ?? [parsed]).find((v: { name: string }) => v.name === FORGED_ROW)
    assert.ok(named, `${args.join(' ')}: the name as stored`)
  }
})

/** Shown as "live" by a terminal that honours the override; stored ones are printed escaped. */
const REVERSED = '\u202eevil'
const HIDDEN = /[\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/u

test('a --name with a text-direction or invisible character is refused naming it as U+XXXX; one stored before is printed escaped', async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { id } = await createKeyViaCli(db, { name: 'good' })
  const runs = await Promise.all(
    [
      [['keys', 'create', '--plan', 'free', '--name', REVERSED], 'U+202E'],
      [['keys', 'create', '--plan', 'free', '--name', 'a\u2066b'], 'U+2066'],
      [['keys', 'update', id, '--name', 'zero\u200bwidth'], 'U+200B'],
      [['keys', 'update', id, '--name', '\ufeffbom'], 'U+FEFF'],
      [['admin-tokens', 'create', '--name', REVERSED], 'U+202E'],
    ].map(async ([args, character]) => ({ run: await runCli(args as string[], { db }), character: character as string })),
  )
  for (const { run, character } of runs) {
    assert.equal(run.code, 2, run.stderr)
    assert.equal(
      run.stderr.split('\n')[0],
      `animal-store: --name must not contain ${character} (no text-direction or invisible characters)`,
    )
    assert.doesNotMatch(run.stderr + run.stdout, HIDDEN)
  }
  assert.deepEqual(
    JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout).data.map((k: { name: string }) => k.name),
    ['good'],
  )
  assert.deepEqual(JSON.parse((await runCli(['admin-tokens', 'list', '--json'], { db })).stdout), { data: [] })

  // One stored before the refusal existed (straight into storage): escaped wherever it is printed.
  const storage = new SqliteStorage({ databaseUrl: db, durability: 'process' })
  try {
    const stored = (await storage.keys.listKeys())[0]!
    await storage.keys.insertKey({
      ...stored,
      id: 'key_0000000000000002',
      quotaId: 'key_0000000000000002',
      name: REVERSED,
      hash: '2'.repeat(64),
    })
  } finally {
    await storage.close()
  }
  for (const args of [
    ['keys', 'list'],
    ['keys', 'show', 'key_0000000000000002'],
    ['keys', 'list', '--json'],
  ]) {
    const out = await runCli(args, { db })
    assert.equal(out.code, 0, out.stderr)
    assert.doesNotMatch(out.stdout, HIDDEN, args.join(' '))
    assert.ok(out.stdout.includes('\\u202eevil'), `${args.join(' ')}: ${out.stdout}`)
  }
})
