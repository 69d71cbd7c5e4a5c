/**
 * The admin API's listeners, with real processes: with ADMIN_PORT, on its own listener only (the
 * main one answers 404), started with the server, named in the start-up output and closed
 * gracefully with it; without ADMIN_PORT, on the main listener for loopback clients.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { freePort, REVOCATION_DEADLINE_MS, request, runCli, runServerToExit, startServer, useTempDir, waitFor } from '../helpers/process.js'

async function adminToken(db: string): Promise<string> {
  const created = await runCli(['admin-tokens', 'create', '--name', 'ops', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  return JSON.parse(created.stdout).token
}

test('ADMIN_PORT: the admin API on its own listener only, closed with the server', { timeout: 90_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const token = await adminToken(db)
  const adminPort = await freePort()
  const server = await startServer(t, { dir, db, env: { ADMIN_PORT: String(adminPort) } })
  const admin = `http://127.0.0.1:${adminPort}/admin/v1`
  const auth = { authorization: `Bearer ${token}` }

  assert.match(server.stdout(), new RegExp(`Admin API: {3}http://127\\.0\\.0\\.1:${adminPort}/admin/v1 `))

  const created = await request(`${admin}/keys`, { method: 'POST', headers: auth, body: { plan: 'free', name: 'via admin listener' } })
  assert.equal(created.status, 201, created.text)
  const { key, apiKey } = created.body as { key: string; apiKey: { id: string } }
  assert.equal((await request(`${admin}/keys/${apiKey.id}`, { headers: auth })).status, 200)
  assert.equal((await request(`${admin}/openapi.json`, { headers: auth })).status, 200)

  // The main listener: no admin API at all, even for a loopback client with a valid token.
  const onMain = await request(`${server.url}/admin/v1/keys`, { headers: auth })
  assert.equal(onMain.status, 404)
  assert.equal((onMain.body as { code: string }).code, 'not_found')
  // The admin listener serves nothing else.
  assert.equal((await request(`http://127.0.0.1:${adminPort}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })).status, 404)
  // The key created through the admin listener works on the main one.
  assert.equal((await request(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })).status, 200)

  // Changes made through the admin listener reach the main one: printed, not asserted (bounded).
  const bearerKey = { authorization: `Bearer ${key}` }
  let started = performance.now()
  const updated = await request(`${admin}/keys/${apiKey.id}`, { method: 'PATCH', headers: auth, body: { plan: 'pro' } })
  assert.equal(updated.status, 200, updated.text)
  assert.ok(
    await waitFor(
      async () =>
        (await request(`${server.url}/v1/pets`, { headers: bearerKey })).headers.get('ratelimit-policy')?.includes('q=300;') === true,
      REVOCATION_DEADLINE_MS,
    ),
    'the plan change reached the main listener',
  )
  const updateMs = performance.now() - started
  started = performance.now()
  assert.equal((await request(`${admin}/keys/${apiKey.id}/revoke`, { method: 'POST', headers: auth })).status, 200)
  assert.ok(
    await waitFor(async () => (await request(`${server.url}/v1/pets`, { headers: bearerKey })).status === 401, REVOCATION_DEADLINE_MS),
    'the revocation reached the main listener',
  )
  const revokeMs = performance.now() - started
  process.stdout.write(
    `# admin API -> main listener (SQLite, KEY_REFRESH_MS default): update ${updateMs.toFixed(0)} ms, revocation ${revokeMs.toFixed(0)} ms\n`,
  )

  const stopped = await server.stop('SIGTERM')
  assert.equal(stopped.code, 0)
  await assert.rejects(request(`${admin}/keys`, { headers: auth, timeoutMs: 2000 }), 'the admin listener is closed with the server')
})

test('no ADMIN_PORT: the admin API on the main listener, for loopback clients', { timeout: 90_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const token = await adminToken(db)
  const server = await startServer(t, { dir, db })
  assert.match(server.stdout(), /Admin API: {3}http:\/\/127\.0\.0\.1:\d+\/admin\/v1 \(loopback clients only/)
  const res = await request(`${server.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual((res.body as { data: unknown[] }).data, [])
})

test('ADMIN_PORT already taken: the start fails in one line naming ADMIN_PORT and ADMIN_HOST, exit status 2', {
  timeout: 60_000,
}, async (t) => {
  const dir = await useTempDir(t)
  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())))
  const port = (taken.address() as net.AddressInfo).port
  const result = await runServerToExit({ dir, env: { ADMIN_PORT: String(port) } })
  assert.equal(result.code, 2, result.stderr)
  assert.equal(
    result.stderr.trim(),
    `animal-store: cannot start: ADMIN_PORT=${port} ADMIN_HOST=127.0.0.1: address already in use: another process listens on 127.0.0.1:${port} (EADDRINUSE)`,
  )
})
