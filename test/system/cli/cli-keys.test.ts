/**
 * `animal-store keys show|update|rotate|usage` and the list filters, as real processes on a SQLite
 * file: JSON output, bad input (exit 2, the flag named, nothing changed), and a running server
 * that sees rotations and whose counters `keys usage` reads from the limiter state file.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { awayFromBoundary } from '../../helpers/windows.js'
import { bearer, REVOCATION_DEADLINE_MS, request, runCli, startServer, useTempDir, waitFor } from '../helpers/process.js'

type Json = Record<string, any>

async function cliJson(args: string[], db: string): Promise<Json> {
  const r = await runCli([...args, '--json'], { db })
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
  const lines = r.stdout.split('\n').filter(Boolean)
  assert.equal(lines.length, 1, `one line of JSON: ${r.stdout}`)
  return JSON.parse(lines[0]!)
}

test('keys show, update, rotate, list filters: --json, and bad input exits 2 naming the flag', { timeout: 300_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { key, apiKey: created } = await cliJson(
    ['keys', 'create', '--plan', 'pro', '--name', 'Acme', '--expires-at', '2099-01-01T00:00:00Z', '--metadata', '{"customer":"c_42"}'],
    db,
  )
  assert.match(key, /^as_live_/)
  assert.deepEqual([created.expiresAt, created.metadata, created.state], ['2099-01-01T00:00:00.000Z', { customer: 'c_42' }, 'active'])
  const id = created.id as string

  const shown = await cliJson(['keys', 'show', id], db)
  assert.equal(shown.key, undefined, 'show never prints the key')
  assert.deepEqual([shown.name, shown.plan, shown.perMinute, shown.quotaId], ['Acme', 'pro', 300, id])
  const human = await runCli(['keys', 'show', id], { db })
  assert.match(human.stdout, /^Key: +key_\S+ \(as_live_.{4}…\)$/m)
  assert.match(human.stdout, /^Expires: +2099-01-01T00:00:00.000Z$/m)
  assert.ok(!human.stdout.includes(key), 'no key in the human output either')

  const updated = await cliJson(
    ['keys', 'update', id, '--plan', 'enterprise', '--per-minute', '7', '--per-day', '70', '--metadata', 'none'],
    db,
  )
  assert.deepEqual([updated.plan, updated.perMinute, updated.perDay, updated.metadata], ['enterprise', 7, 70, null])
  const renamed = await cliJson(['keys', 'update', id, '--name', 'Acme Corp', '--expires-at', 'none'], db)
  assert.deepEqual([renamed.name, renamed.perMinute, renamed.expiresAt], ['Acme Corp', 7, null])

  const refused: Array<[string[], RegExp]> = [
    [['keys', 'update', id, '--plan', 'gold'], /--plan must be one of free, pro, business, enterprise/],
    [['keys', 'update', id, '--plan', 'pro', '--per-minute', '5'], /--per-minute applies to the enterprise plan only/],
    [['keys', 'update', id, '--expires-at', '2001-01-01T00:00:00Z'], /--expires-at must be in the future/],
    [['keys', 'update', id, '--expires-at', 'tomorrow'], /--expires-at must be an ISO 8601 date and time/],
    // A date that does not exist is refused, not moved (2027-02-30 was stored as 2 March).
    [
      ['keys', 'update', id, '--expires-at', '2027-02-30T00:00:00Z'],
      /^animal-store: --expires-at must be a date and time that exists \(February 2027 has 28 days, not day 30; got "2027-02-30T00:00:00Z"\)\n/,
    ],
    [
      ['keys', 'update', id, '--expires-at', '2099-01-01T24:00Z'],
      /--expires-at must be a date and time that exists \(hours go from 00 to 23, not 24/,
    ],
    // PostgreSQL cannot store a NUL, SQLite can: refused before either is asked.
    [
      ['keys', 'update', id, '--metadata', '{"customer":"c\\u0000"}'],
      /^animal-store: metadata\.customer must not contain U\+0000 \(NUL\)\n/,
    ],
    [['keys', 'update', id, '--metadata', '{"x":'], /--metadata must be a JSON object/],
    [['keys', 'update', id, '--metadata', JSON.stringify({ x: 'y'.repeat(5000) })], /--metadata must be at most 4096 bytes/],
    [['keys', 'update', id], /keys update needs at least one of/],
    [
      ['keys', 'update', id, '--scopes', 'pets:read,pets:admin'],
      /^animal-store: --scopes: "pets:admin" is not a scope; the scopes are pets:read/,
    ],
    [['keys', 'create', '--plan', 'free', '--name', 'x', '--scopes', ''], /--scopes: "" is not a scope/],
    [['keys', 'rotate', id], /keys rotate needs --grace/],
    [['keys', 'rotate', id, '--grace', '604801'], /--grace must be an integer from 0 to 604800/],
    [['keys', 'rotate', id, '--grace', '1h'], /--grace must be an integer from 0 to 604800/],
    [['keys', 'show'], /keys show takes exactly one KEY_ID/],
    [['keys', 'list', '--state', 'sleeping'], /--state must be one of active, expired, revoked/],
    [['keys', 'list', '--limit', '500'], /--limit must be an integer from 1 to 100/],
    [['keys', 'create', '--plan', 'free', '--name', 'x', '--expires-at', '2001-01-01T00:00:00Z'], /--expires-at must be in the future/],
    [
      ['keys', 'create', '--plan', 'free', '--name', 'x', '--expires-at', '2099-04-31T00:00:00Z'],
      /--expires-at must be a date and time that exists/,
    ],
  ]
  for (const [args, message] of refused) {
    const r = await runCli(args, { db })
    assert.equal(r.code, 2, `${args.join(' ')}: exit 2 (${r.stderr})`)
    assert.match(r.stderr, message, args.join(' '))
    assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+/, 'no stack trace')
  }
  assert.deepEqual(await cliJson(['keys', 'show', id], db), { ...renamed, lastUsedAt: null }, 'nothing changed by bad input')
  const nowhere = await runCli(['keys', 'usage', id], { db: ':memory:' })
  assert.equal(nowhere.code, 2, 'no Redis, no state file: no counters to read')
  assert.match(nowhere.stderr, /without REDIS_URL the counters live only in each server's memory/)
  const unknown = await runCli(['keys', 'show', 'key_nope'], { db })
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /^animal-store: no key with id key_nope/)

  const rotated = await cliJson(['keys', 'rotate', id, '--grace', '3600'], db)
  assert.match(rotated.key, /^as_live_/)
  assert.deepEqual(
    [rotated.apiKey.quotaId, rotated.apiKey.rotatedFrom, rotated.previous.rotatedTo, rotated.previous.state],
    [id, id, rotated.apiKey.id, 'active'],
  )
  const again = await runCli(['keys', 'rotate', id, '--grace', '10'], { db })
  assert.equal(again.code, 2)
  assert.deepEqual(again.stderr.split('\n').filter(Boolean), [
    `animal-store: key ${id} was rotated to ${rotated.apiKey.id}; change that key instead`,
  ])

  // List: filters and pages.
  const free = await cliJson(['keys', 'create', '--plan', 'free', '--name', 'other'], db)
  await cliJson(['keys', 'revoke', free.apiKey.id], db)
  // A key in the wrong state: the admin API's 409 message, one line, status 2.
  const revokedUpdate = await runCli(['keys', 'update', free.apiKey.id, '--name', 'x'], { db })
  assert.equal(revokedUpdate.code, 2)
  assert.deepEqual(revokedUpdate.stderr.split('\n').filter(Boolean), [
    `animal-store: key ${free.apiKey.id} is revoked; a revoked key cannot be updated`,
  ])
  const names = (page: Json) => (page.data as Json[]).map((k) => k.name).sort()
  assert.deepEqual(names(await cliJson(['keys', 'list', '--state', 'revoked'], db)), ['other'])
  assert.deepEqual(names(await cliJson(['keys', 'list', '--plan', 'enterprise'], db)), ['Acme Corp', 'Acme Corp'])
  assert.deepEqual(names(await cliJson(['keys', 'list', '--name', 'OTH'], db)), ['other'])
  // Newest first (issue 32): the key made last ('other'), then the rotation's successor, then the
  // key it replaced; the same order page by page.
  const all = (await cliJson(['keys', 'list'], db)).data as Json[]
  assert.deepEqual(
    all.map((k) => k.id),
    [free.apiKey.id, rotated.apiKey.id, id],
  )
  const table = (await runCli(['keys', 'list'], { db })).stdout.split('\n').slice(1, 4)
  assert.deepEqual(
    table.map((line) => line.split(' ')[0]),
    [free.apiKey.id, rotated.apiKey.id, id],
  )
  const page1 = await cliJson(['keys', 'list', '--limit', '2'], db)
  assert.equal(page1.data.length, 2)
  assert.equal(typeof page1.nextAfter, 'string')
  const page2 = await cliJson(['keys', 'list', '--limit', '2', '--after', page1.nextAfter], db)
  assert.deepEqual([page2.data.length, page2.nextAfter], [1, null])
  assert.deepEqual(
    [...(page1.data as Json[]), ...(page2.data as Json[])].map((k) => k.id),
    all.map((k) => k.id),
  )
})

test('a running server sees a CLI rotation; keys usage reads its counters from the state file', { timeout: 60_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { key, apiKey: created } = await cliJson(['keys', 'create', '--plan', 'free', '--name', 'c'], db)
  const server = await startServer(t, { dir, db, env: { LIMITER_SNAPSHOT_MS: '100', LAST_USED_FLUSH_MS: '100' } })
  // The counts below are compared across one minute window (a new minute would start them at 0).
  await awayFromBoundary(25_000)
  for (let i = 0; i < 3; i++) assert.equal((await request(`${server.url}/v1/pets`, { headers: bearer(key) })).status, 200)
  const rotated = await cliJson(['keys', 'rotate', created.id, '--grace', '0'], db)
  assert.ok(
    await waitFor(async () => (await request(`${server.url}/v1/pets`, { headers: bearer(key) })).status === 401, REVOCATION_DEADLINE_MS),
    'grace 0: the old key is refused',
  )
  const last = await request(`${server.url}/v1/pets`, { headers: bearer(rotated.key) })
  assert.equal(last.status, 200)
  // Polls with the old key that passed before the rotation was seen counted too.
  const left = Number(last.headers.get('x-ratelimit-remaining'))
  assert.ok(left <= 56, `the successor continues the quota (remaining ${left})`)
  // The snapshot (every 100 ms) and the last-used flush (every 100 ms) are written by now or soon.
  let usage: Json = {}
  assert.ok(
    await waitFor(async () => {
      usage = await cliJson(['keys', 'usage', rotated.apiKey.id], db)
      return usage.minute.used === 60 - left && usage.lastUsedAt !== null
    }, 10_000),
    `keys usage shows what the headers showed: ${JSON.stringify(usage)}`,
  )
  assert.deepEqual([usage.quotaId, usage.source, usage.minute.remaining, usage.day.used], [created.id, 'state-file', left, 60 - left])
  assert.equal(typeof usage.snapshotAt, 'string')
  const human = await runCli(['keys', 'usage', rotated.apiKey.id], { db })
  assert.match(human.stdout, new RegExp(`^Minute +${60 - left}/60 used, ${left} remaining`, 'm'))
  assert.match(human.stdout, /as of the state file's last snapshot/)
})

test('keys list: a header row, a rotated key in its grace period as "rotated, works until …" (keys show too), a key about to expire as "expires in …"', {
  timeout: 120_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { apiKey: old } = await cliJson(['keys', 'create', '--plan', 'pro', '--name', 'Acme'], db)
  const { apiKey: successor, previous } = await cliJson(['keys', 'rotate', old.id, '--grace', '3600'], db)
  assert.equal(previous.state, 'active', 'the API calls it active: it still authenticates')
  // Issue 32: a key expiring within 24 hours says in how long.
  const soonAt = new Date(Date.now() + 3 * 60_000).toISOString()
  const { apiKey: soon } = await cliJson(['keys', 'create', '--plan', 'pro', '--name', 'Acme', '--expires-at', soonAt], db)

  const list = await runCli(['keys', 'list'], { db })
  assert.equal(list.code, 0, list.stderr)
  const [header, ...rows] = list.stdout.split('\n').filter(Boolean)
  assert.match(header!, /^ID +PREFIX +PLAN +PER MINUTE +PER DAY +STATE +NAME$/)
  const row = (id: string) => rows.find((r) => r.startsWith(`${id}  `))
  assert.match(row(old.id)!, new RegExp(` rotated, works until ${previous.expiresAt.replace(/\./g, '\\.')} +Acme$`))
  assert.match(row(successor.id)!, / active +Acme$/)
  assert.match(row(soon.id)!, new RegExp(` expires in 3 min \\(${soon.expiresAt.replace(/\./g, '\\.')}\\) +Acme$`))
  // Each value under its heading: the columns line up.
  for (const r of rows) assert.equal(r.indexOf(' Acme'), header!.indexOf(' NAME'), `aligned:\n${list.stdout}`)

  const show = await runCli(['keys', 'show', old.id], { db })
  assert.match(show.stdout, new RegExp(`^State: +rotated, works until ${previous.expiresAt.replace(/\./g, '\\.')}$`, 'm'))
})

test('keys revoke stops a rotation chain: it names every key revoked, and a running server refuses them all', {
  timeout: 120_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  /** A key rotated twice, each old key kept for an hour: [A, B, C], oldest first. */
  const chain = async (name: string) => {
    const first = await cliJson(['keys', 'create', '--plan', 'free', '--name', name], db)
    const links = [first]
    for (let i = 0; i < 2; i++) links.push(await cliJson(['keys', 'rotate', links.at(-1)!.apiKey.id, '--grace', '3600'], db))
    return links.map((l) => ({ key: l.key as string, id: l.apiKey.id as string }))
  }
  const [a, b, c] = await chain('compromised')
  const server = await startServer(t, { dir, db })
  const status = async (key: string) => (await request(`${server.url}/v1/pets`, { headers: bearer(key) })).status
  for (const k of [a!, b!, c!]) assert.equal(await status(k.key), 200, 'the old keys work during their grace period')

  const revoked = await runCli(['keys', 'revoke', c!.id], { db })
  assert.equal(revoked.code, 0, revoked.stderr)
  assert.deepEqual(revoked.stdout.split('\n').filter(Boolean), [
    `Revoked ${c!.id}.`,
    `Also revoked ${b!.id}, ${a!.id}: keys of its rotation chain still in their grace period.`,
    'Running servers refuse them at their next key-change poll (every KEY_REFRESH_MS, 1 s by default; at once on PostgreSQL).',
  ])
  for (const k of [a!, b!, c!])
    assert.ok(await waitFor(async () => (await status(k.key)) === 401, REVOCATION_DEADLINE_MS), `the server refuses ${k.id}`)
  const again = await cliJson(['keys', 'revoke', c!.id], db)
  assert.deepEqual([again.alreadyRevoked, again.alsoRevoked], [true, []])

  // An old key named: the other grace periods end, and the output names the key the chain goes on with.
  const [x, y, z] = await chain('retired')
  const old = await runCli(['keys', 'revoke', x!.id], { db })
  assert.deepEqual(old.stdout.split('\n').filter(Boolean), [
    `Revoked ${x!.id}.`,
    `Also revoked ${y!.id}: keys of its rotation chain still in their grace period.`,
    'Running servers refuse them at their next key-change poll (every KEY_REFRESH_MS, 1 s by default; at once on PostgreSQL).',
    `Not revoked by this: ${z!.id}, its successor in the rotation chain; revoke it too to stop the whole chain.`,
  ])
  assert.equal((await cliJson(['keys', 'show', z!.id], db)).state, 'active')
})

test('keys create --scopes and keys update --scopes: shown by keys show, in the JSON, and enforced by a running server', {
  timeout: 120_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const { key, apiKey } = await cliJson(
    ['keys', 'create', '--plan', 'free', '--name', 'dashboard', '--scopes', 'orders:read, pets:read'],
    db,
  )
  assert.deepEqual(apiKey.scopes, ['pets:read', 'orders:read'])
  assert.match((await runCli(['keys', 'show', apiKey.id], { db })).stdout, /^Scopes: +pets:read orders:read$/m)
  const server = await startServer(t, { dir, db })
  const post = () =>
    request(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: '{"name":"Rex","categoryId":1}',
    })
  const refused = await post()
  assert.equal(refused.status, 403, refused.text)
  assert.equal((refused.body as Json).code, 'insufficient_scope')
  const updated = await cliJson(['keys', 'update', apiKey.id, '--scopes', 'pets:read,pets:write'], db)
  assert.deepEqual(updated.scopes, ['pets:read', 'pets:write'])
  assert.ok(await waitFor(async () => (await post()).status === 201, REVOCATION_DEADLINE_MS), 'the server uses the new scopes')
})
