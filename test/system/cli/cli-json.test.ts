/**
 * The CLI's --json is the admin API's JSON: a script written against one reads the other. Both
 * read one SQLite file here, so where they show the same keys the documents are compared whole.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { bearer, request, runCli, startServer, useTempDir } from '../helpers/process.js'

type Json = Record<string, any>

/** A document with each value replaced by its JSON type: what "the same shape" means. */
const shape = (value: unknown): unknown => {
  if (value === null) return 'null'
  if (Array.isArray(value)) return value.map(shape)
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]))
  return typeof value
}

test('keys --json prints what the admin API answers: create, list, show, rotate, revoke, usage', { timeout: 180_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  // `keys usage` reads the counters from the state file of the server (no Redis here).
  const env = { LIMITER_STATE_FILE: join(dir, 'limiter-state.json') }
  const cli = async (...args: string[]): Promise<Json> => {
    const r = await runCli([...args, '--json'], { db, env })
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const { token } = await cli('admin-tokens', 'create', '--name', 'ops')
  const server = await startServer(t, { dir, db, env })
  const api = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await request(`${server.adminUrl}/admin/v1${path}`, { method, headers: bearer(token), body })
    assert.ok(res.status === 200 || res.status === 201, `${method} ${path}: ${res.status} ${res.text}`)
    return res.body as Json
  }

  const created = await cli('keys', 'create', '--plan', 'pro', '--name', 'Acme', '--metadata', '{"customer":"c_42"}')
  const createdByApi = await api('POST', '/keys', { plan: 'pro', name: 'Beta', metadata: { customer: 'c_43' } })
  assert.deepEqual(shape(created), shape(createdByApi), 'create: the 201 of POST /admin/v1/keys, {"key","apiKey"}')
  const [acme, beta] = [created.apiKey.id as string, createdByApi.apiKey.id as string]

  for (const id of [acme, beta]) assert.deepEqual(await cli('keys', 'show', id), await api('GET', `/keys/${id}`), `show ${id}`)
  assert.deepEqual(await cli('keys', 'list'), await api('GET', '/keys'), 'list: {"data":[…],"nextAfter":null}')
  const page = await cli('keys', 'list', '--limit', '1')
  assert.deepEqual(page, await api('GET', '/keys?limit=1'), 'one page')
  assert.deepEqual(
    await cli('keys', 'list', '--limit', '1', '--after', page.nextAfter),
    await api('GET', `/keys?limit=1&after=${page.nextAfter}`),
  )

  const rotated = await cli('keys', 'rotate', acme, '--grace', '60')
  const rotatedByApi = await api('POST', `/keys/${beta}/rotate`, { gracePeriodSeconds: 60 })
  assert.deepEqual(shape(rotated), shape(rotatedByApi), 'rotate: {"key","apiKey","previous"}')
  assert.deepEqual(await cli('keys', 'show', acme), rotated.previous)

  const revoked = await cli('keys', 'revoke', acme)
  assert.deepEqual(Object.keys(revoked).sort(), ['alreadyRevoked', 'alsoRevoked', 'apiKey'])
  assert.deepEqual([revoked.alreadyRevoked, revoked.alsoRevoked], [false, []], 'its successor is no grace key: not revoked')
  const again = await api('POST', `/keys/${acme}/revoke`)
  assert.deepEqual(again, { ...revoked, alreadyRevoked: true }, 'revoke: {"apiKey","alreadyRevoked","alsoRevoked"}')
  assert.deepEqual(await cli('keys', 'revoke', acme), again)

  // The API's usage, and where the CLI's numbers come from (the API's are live; these as of a snapshot).
  const successor = rotatedByApi.apiKey.id as string
  const { source, snapshotAt, ...usage } = await cli('keys', 'usage', successor)
  assert.equal(source, 'state-file')
  assert.ok(snapshotAt === null || typeof snapshotAt === 'string')
  const usageByApi = await api('GET', `/keys/${successor}/usage`)
  assert.deepEqual(shape(usage), shape(usageByApi))
  assert.deepEqual([usage.keyId, usage.quotaId], [usageByApi.keyId, usageByApi.quotaId])
})
