/**
 * Hostile text against a real server process, on SQLite and on PostgreSQL (a scratch database;
 * skipped loudly without a server): a NUL in an animal's name, in key metadata and in an admin
 * filter, a key name that reads backwards, dates that do not exist, and the server's own key with
 * a character lost or added pasted into URLs. Every answer is the same 400 naming the field on
 * both stores, and the server's log file (written by the service's own logger) has no error line
 * and no line holding more of the key than its display prefix.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { requireService } from '../../helpers/services.js'
import { useScratchDatabase } from '../helpers/cluster.js'
import { bearer, createKeyViaCli, request, runCli, startServer, useTempDir } from '../helpers/process.js'

async function hostileTextAgainst(t: TestContext, databaseUrl: (dir: string) => Promise<string>): Promise<void> {
  const dir = await useTempDir(t)
  const db = await databaseUrl(dir)
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', perMinute: 10_000, perDay: 100_000, name: 'hostile' })
  const token = JSON.parse((await runCli(['admin-tokens', 'create', '--name', 'ops', '--json'], { db })).stdout).token as string
  const server = await startServer(t, { dir, db })
  const shown = `${key.slice(0, 12)}…`
  const api = (path: string, body?: unknown) =>
    request(`${server.url}${path}`, { headers: bearer(key), body, method: body ? 'POST' : 'GET' })
  const admin = (path: string, body?: unknown) =>
    request(`${server.adminUrl}/admin/v1${path}`, { headers: bearer(token), body, method: body ? 'POST' : 'GET' })

  const expected: Array<[string, Promise<{ status: number; body: unknown }>, string]> = [
    ['NUL in a name', api('/v1/pets', { name: 'Rex\u0000', categoryId: 1 }), 'name must not contain U+0000 (NUL)'],
    [
      'NUL in metadata',
      admin('/keys', { plan: 'free', name: 'm', metadata: { customer: '\u0000' } }),
      'metadata.customer must not contain U+0000 (NUL)',
    ],
    ['NUL in a filter', admin('/audit-log?actor=a%00'), 'query parameter actor must not contain U+0000 (NUL)'],
    [
      'a name that reads backwards',
      admin('/keys', { plan: 'free', name: '\u202eevil' }),
      'name must not contain U+202E (no text-direction or invisible characters)',
    ],
    [
      '30 February',
      admin('/keys', { plan: 'free', name: 'd', expiresAt: '2027-02-30T00:00:00Z' }),
      'expiresAt must be a date and time that exists (February 2027 has 28 days, not day 30)',
    ],
    ['hour 24', admin('/usage/top?from=2030-01-01T24:00:00Z'), 'from must be a date and time that exists (hours go from 00 to 23, not 24)'],
    ['the key less a character, as a parameter name', api(`/v1/pets?${key.slice(0, -1)}=1`), `unknown query parameter '${shown}'`],
    [
      'the key and a character more, as a parameter name',
      api(`/v1/pets?limit=5&${key.slice(0, 20)}x${key.slice(20)}=1`),
      `unknown query parameter '${shown}'`,
    ],
    ['the key less a character, as a value', api(`/v1/pets?api_key=${key.slice(0, -1)}`), "unknown query parameter 'api_key'"],
  ]
  for (const [what, answer, message] of expected) {
    const res = await answer
    assert.deepEqual([res.status, res.body], [400, { code: 'invalid_request', message, status: 400 }], what)
  }
  const pets = await api('/v1/pets')
  assert.deepEqual(pets.body, [], 'no animal stored')

  await server.stop()
  const lines = readFileSync(server.logFile, 'utf8').trim().split('\n')
  const access = lines.filter((l) => l.includes('"msg":"request"'))
  assert.ok(access.length >= expected.length + 1, `one access line per request (${access.length})`)
  assert.deepEqual(
    lines.filter((l) => /"level":"(error|fatal)"/.test(l)),
    [],
  )
  const fragments = [key.slice(12, 20), key.slice(20, 28), key.slice(28, 36), key.slice(-8)]
  assert.deepEqual(
    lines.filter((l) => fragments.some((f) => l.includes(f))),
    [],
  )
  assert.ok(
    access.some((l) => (JSON.parse(l) as { url: string }).url === `/v1/pets?${shown}=1`),
    'the access line shows the display prefix',
  )
}

test('hostile text against a real server on SQLite: 400 naming the field, nothing logged that should not be', {
  timeout: 120_000,
}, async (t) => {
  await hostileTextAgainst(t, async (dir) => join(dir, 'store.db'))
})

test('hostile text against a real server on PostgreSQL: the same answers', { timeout: 120_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  await hostileTextAgainst(t, () => useScratchDatabase(t, 'as_hostile_'))
})
