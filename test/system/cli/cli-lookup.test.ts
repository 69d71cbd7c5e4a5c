/**
 * `animal-store keys lookup` (src/cli/keys-command.ts) as a real process on a SQLite file: a whole
 * key as an operand or from standard input (`-`), a prefix, --json as the admin API answers, and
 * a secret that is no key (exit 2, the secret not printed).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli, useTempDir } from '../helpers/process.js'

test('keys lookup: by key (operand or stdin), by prefix, --json, unknown secret, bad usage', { timeout: 300_000 }, async (t) => {
  const db = join(await useTempDir(t), 'store.db')
  const created = await runCli(['keys', 'create', '--plan', 'free', '--name', 'leaked', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const { key, apiKey } = JSON.parse(created.stdout)
  const revoked = await runCli(['keys', 'revoke', apiKey.id], { db })
  assert.equal(revoked.code, 0, revoked.stderr)

  const byStdin = await runCli(['keys', 'lookup', '-', '--json'], { db, stdin: `${key}\n` })
  assert.equal(byStdin.code, 0, byStdin.stderr)
  assert.deepEqual([JSON.parse(byStdin.stdout).id, JSON.parse(byStdin.stdout).state], [apiKey.id, 'revoked'])

  const human = await runCli(['keys', 'lookup', key], { db })
  assert.equal(human.code, 0, human.stderr)
  assert.match(human.stdout, new RegExp(`keys revoke ${apiKey.id}`))
  assert.ok(!human.stdout.includes(key), 'the key is not printed back')

  const byPrefix = await runCli(['keys', 'lookup', '--prefix', apiKey.prefix, '--json'], { db })
  assert.equal(byPrefix.code, 0, byPrefix.stderr)
  assert.deepEqual(
    JSON.parse(byPrefix.stdout).data.map((k: { id: string }) => k.id),
    [apiKey.id],
  )

  const unknown = await runCli(['keys', 'lookup', '-'], { db, stdin: key.slice(0, -1) })
  assert.equal(unknown.code, 2, unknown.stderr)
  assert.match(unknown.stderr, /no key has this secret/)
  assert.ok(!unknown.stderr.includes(key.slice(0, -1)))

  for (const args of [
    ['keys', 'lookup'],
    ['keys', 'lookup', key, '--prefix', apiKey.prefix],
    ['keys', 'lookup', '--prefix', 'as_live_A'],
  ]) {
    const bad = await runCli(args, { db })
    assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`)
  }
})
