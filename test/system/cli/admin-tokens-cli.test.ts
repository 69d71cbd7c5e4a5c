/** `animal-store admin-tokens create|list|revoke`, run as real processes on a SQLite file. */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createAdminToken } from '../../../src/admin-tokens/admin-tokens.js'
import { SqliteStorage } from '../../../src/storage/sqlite/sqlite-storage.js'
import { bearer, ROOT, request, runCli, startServer, useTempDir } from '../helpers/process.js'

test('admin-tokens create shows the token once; list and revoke (idempotent) never show it', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')

  const created = await runCli(['admin-tokens', 'create', '--name', 'ops', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const { token, adminToken, ...rest } = JSON.parse(created.stdout)
  assert.deepEqual([Object.keys(rest), adminToken.revokedAt], [[], null])
  const out = { ...adminToken, token }
  assert.match(out.token, /^as_admin_[0-9A-Za-z]{38}$/)
  assert.match(out.id, /^adm_[0-9A-Za-z]{16}$/)
  assert.equal(out.name, 'ops')
  assert.equal(out.role, 'admin', 'a token made without --role is admin')
  assert.ok(out.token.startsWith(out.prefix))

  const human = await runCli(['admin-tokens', 'create', '--name', 'human'], { db })
  assert.equal(human.code, 0, human.stderr)
  assert.match(
    human.stdout,
    /^Created admin token adm_\w+ \(human, role admin\)\.\nThis is the only time the token is shown; store it now:\n\n {2}as_admin_\w{38}\n/,
  )

  const reader = await runCli(['admin-tokens', 'create', '--name', 'auditor', '--role', 'read', '--json'], { db })
  assert.equal(reader.code, 0, reader.stderr)
  assert.equal(JSON.parse(reader.stdout).adminToken.role, 'read')

  const list = await runCli(['admin-tokens', 'list', '--json'], { db })
  assert.equal(list.code, 0, list.stderr)
  const rows = JSON.parse(list.stdout).data
  assert.deepEqual(
    rows.map((r: { name: string; role: string; revokedAt: null }) => [r.name, r.role, r.revokedAt]),
    [
      ['ops', 'admin', null],
      ['human', 'admin', null],
      ['auditor', 'read', null],
    ],
  )
  assert.equal(list.stdout.includes(out.token), false)
  assert.equal(list.stdout.includes(out.token.slice(13)), false)
  const plain = await runCli(['admin-tokens', 'list'], { db })
  assert.match(plain.stdout, /^ID +PREFIX +ROLE +MADE BY +STATE +NAME$/m)
  assert.match(plain.stdout, /^adm_\w+ +as_admin_\w+… +read +cli +active {2}auditor$/m)
  assert.match(plain.stdout, new RegExp(`^${out.id} {2}${out.prefix}… {2}admin {2}cli +active {2}ops$`, 'm'))

  const revoked = await runCli(['admin-tokens', 'revoke', out.id, '--json'], { db })
  assert.equal(revoked.code, 0, revoked.stderr)
  const { adminToken: first, alreadyRevoked } = JSON.parse(revoked.stdout)
  assert.deepEqual([first.id, typeof first.revokedAt, alreadyRevoked], [out.id, 'string', false])
  const again = await runCli(['admin-tokens', 'revoke', out.id], { db })
  assert.equal(again.code, 0, again.stderr)
  assert.equal(again.stdout, `Admin token ${out.id} was already revoked (at ${first.revokedAt}).\n`)

  // Stored: the hash and prefix only.
  const storage = new SqliteStorage({ databaseUrl: db, durability: 'process' })
  try {
    const stored = await storage.adminTokens.list()
    assert.equal(JSON.stringify(stored).includes(out.token.slice(13)), false)
    assert.equal(stored.find((s) => s.id === out.id)?.revokedAt, Date.parse(first.revokedAt))
    // Audited under the OS user: two creates and two revokes (the repeat changed nothing, and says so).
    const { entries } = await storage.audit.list({ limit: 100 })
    assert.deepEqual(
      entries.map((e) => [e.action, e.actor.type, e.keyId, e.details.tokenId, e.details.alreadyRevoked]),
      [
        ['admin_token.create', 'cli', null, out.id, undefined],
        ['admin_token.create', 'cli', null, stored.find((s) => s.name === 'human')!.id, undefined],
        ['admin_token.create', 'cli', null, stored.find((s) => s.name === 'auditor')!.id, undefined],
        ['admin_token.revoke', 'cli', null, out.id, undefined],
        ['admin_token.revoke', 'cli', null, out.id, true],
      ],
    )
    assert.equal(entries[0]!.actor.id, userInfo().username)
    assert.equal(JSON.stringify(entries).includes(out.token.slice(13)), false)
  } finally {
    await storage.close()
  }
})

test('admin-tokens list names who made each token; revoke takes what the token made with it', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const created = await runCli(['admin-tokens', 'create', '--name', 'console', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const root = JSON.parse(created.stdout).adminToken
  // What the admin API does with the root token (POST /admin/v1/admin-tokens), twice down.
  const storage = new SqliteStorage({ databaseUrl: db, durability: 'process' })
  let t1: string
  let t2: string
  try {
    t1 = (await createAdminToken(storage.adminTokens, { name: 'minted', by: root })).record.id
    t2 = (await createAdminToken(storage.adminTokens, { name: 'minted again', role: 'read', by: { id: t1, role: 'admin' } })).record.id
  } finally {
    await storage.close()
  }
  const list = await runCli(['admin-tokens', 'list'], { db })
  assert.match(list.stdout, new RegExp(`^${t1} +as_admin_\\w+… +admin +${root.id} +active {2}minted$`, 'm'))
  assert.match(list.stdout, new RegExp(`^${t2} +as_admin_\\w+… +read +${t1} +active {2}minted again$`, 'm'))
  assert.deepEqual(
    JSON.parse((await runCli(['admin-tokens', 'list', '--json'], { db })).stdout).data.map(
      (r: { createdBy: string | null }) => r.createdBy,
    ),
    [null, root.id, t1],
  )

  const revoked = await runCli(['admin-tokens', 'revoke', root.id], { db })
  assert.equal(revoked.code, 0, revoked.stderr)
  assert.equal(
    revoked.stdout,
    `Revoked admin token ${root.id}; it is refused from now on, by every server.\n` +
      `Revoked with it, made with it or with a token it made (2): ${t1}, ${t2}; refused from now on, by every server.\n`,
  )
  const states = JSON.parse((await runCli(['admin-tokens', 'list', '--json'], { db })).stdout).data
  assert.ok(
    states.every((r: { revokedAt: string | null }) => r.revokedAt !== null),
    JSON.stringify(states),
  )
})

test('admin-tokens: bad input exits 2 with a message', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  for (const [args, message] of [
    [['admin-tokens', 'create'], /admin-tokens create needs --name/],
    [['admin-tokens', 'create', '--name', ' '], /--name must be 1 to 100 characters/],
    [['admin-tokens', 'create', '--name', 'x', '--role', 'owner'], /--role must be one of read, admin/],
    [['admin-tokens', 'revoke'], /admin-tokens revoke takes exactly one TOKEN_ID/],
    [['admin-tokens', 'revoke', 'adm_nope'], /^animal-store: no admin token with id adm_nope/],
    [['admin-tokens', 'rotate'], /unknown admin-tokens command "rotate"/],
  ] as const) {
    const res = await runCli([...args], { db })
    assert.equal(res.code, 2, `${args.join(' ')}: ${res.stdout}`)
    assert.match(res.stderr, message, args.join(' '))
  }
})

test('a keyless admin call is told the command that makes a token; pasted, it makes one the admin API takes', {
  timeout: 120_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const server = await startServer(t, { dir, db })
  const refused = await request(`${server.adminUrl}/admin/v1/keys`)
  assert.equal(refused.status, 401)
  const { code, message } = refused.body as { code: string; message: string }
  assert.equal(code, 'unauthorized')
  const command = /\(create one with: (.+)\)$/.exec(message)?.[1]
  assert.equal(command, 'node dist/cli.js admin-tokens create --name NAME', message)
  // The README's command, word for word; the start-up output gives the same command (with what
  // this server's configuration needs before it).
  assert.ok(readFileSync(join(ROOT, 'README.md'), 'utf8').includes(`token: ${command}`), 'the README shows it')
  assert.match(server.stdout(), /token: .*\badmin-tokens create --name NAME$/m)

  const [node, script, ...args] = command.replace('NAME', 'ops').split(' ')
  assert.deepEqual([node, script], ['node', 'dist/cli.js'])
  const created = await runCli(args, { db })
  assert.equal(created.code, 0, created.stderr)
  const token = /^ {2}(as_admin_\w+)$/m.exec(created.stdout)?.[1]
  assert.ok(token, created.stdout)
  assert.equal((await request(`${server.adminUrl}/admin/v1/keys`, { headers: bearer(token) })).status, 200)
})
