/**
 * The admin listener, with real processes: the admin API and /metrics on a listener of their own
 * (ADMIN_PORT, default 8081 on 127.0.0.1), started with the server, named in the start-up output
 * and closed gracefully with it; the main listener serves neither, in any spelling, shown from a
 * client in a network namespace of the test's own; ADMIN_PORT=off serves them nowhere.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { RAW_REQUESTS_SCRIPT, useNamespace } from '../helpers/netns.js'
import {
  createKeyViaCli,
  freePort,
  REVOCATION_DEADLINE_MS,
  request,
  runCli,
  runServerToExit,
  startServer,
  useTempDir,
  waitFor,
} from '../helpers/process.js'

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

/** Spellings of the operator paths a client might try on the main listener (raw targets: no client normalises them). */
const OPERATOR_TARGETS = [
  '/admin/v1/keys',
  '/%61dmin/v1/keys',
  '/admi%6e/v1/keys',
  '/ADMIN/v1/keys',
  '/%41dmin/v1/audit-log',
  'http://x/%61dmin/v1/keys',
  '/v1/../admin/v1/keys',
  '/v1/%2e%2e/admin/v1/keys',
  '//admin/v1/keys',
  '/./admin/v1/openapi.json',
  '/metrics',
  '/%6detrics',
  '/v1/../metrics',
]

test('default configuration, from a client that is not on loopback: the main listener serves the public API only, the admin listener is out of reach', {
  timeout: 90_000,
}, async (t) => {
  const ns = useNamespace(t)
  if (ns === undefined) return
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const token = await adminToken(db)
  const key = await createKeyViaCli(db, { name: 'remote client' })
  // Every default, also ADMIN_PORT (8081) and ADMIN_HOST; the main listener on all interfaces.
  const server = await startServer(t, { dir, db, env: { HOST: '0.0.0.0', ADMIN_PORT: undefined } })
  assert.match(
    server.stdout(),
    /^ {2}Admin API: {3}http:\/\/127\.0\.0\.1:8081\/admin\/v1 \(metrics: http:\/\/127\.0\.0\.1:8081\/metrics\)/m,
  )
  const admin = { authorization: `Bearer ${token}` }

  const fromNamespace = async (requests: Array<[string, string, Record<string, string>]>, port: number) =>
    JSON.parse(await ns.node(RAW_REQUESTS_SCRIPT, [JSON.stringify(requests), ns.hostAddress, String(port)])) as number[]
  const attempts = OPERATOR_TARGETS.flatMap((target) =>
    // Under the Free rate per address (60 a minute) these requests are limited by, like any unknown path.
    (['GET', 'POST'] as const).flatMap((method) => [
      [method, target, admin] as [string, string, Record<string, string>],
      [method, target, {}] as [string, string, Record<string, string>],
    ]),
  )
  const statuses = await fromNamespace(
    [['GET', '/v1/pets', { authorization: `Bearer ${key.key}` }], ['GET', '/docs', {}], ...attempts, ['GET', '/healthz', {}]],
    server.port,
  )
  assert.equal(statuses[0], 200, 'the public API answers the remote client')
  assert.equal(statuses[1], 200, '/docs answers it too')
  assert.equal(statuses.at(-1), 200, '/healthz answers it (for load balancers)')
  attempts.forEach(([method, target, headers], i) => {
    assert.equal(statuses[i + 2], 404, `${method} ${target}${headers.authorization ? ' with an admin token' : ''}`)
  })
  // The admin listener is bound to 127.0.0.1: from the namespace it does not even accept a connection.
  assert.deepEqual(
    await fromNamespace(
      [
        ['GET', '/admin/v1/keys', admin],
        ['GET', '/metrics', {}],
      ],
      8081,
    ),
    [0, 0],
  )
  // From this machine it answers.
  assert.equal((await request(`${server.adminUrl}/admin/v1/keys`, { headers: admin })).status, 200)
  const metrics = await request(`${server.adminUrl}/metrics`)
  assert.equal(metrics.status, 200)
  assert.match(metrics.text, /animal_store_http_requests_total\{method="GET",route="\/v1\/pets",status="200"\} 1/)
  assert.equal((await server.stop('SIGTERM')).code, 0)
})

test('ADMIN_PORT=off: no admin API and no /metrics anywhere, said at start', { timeout: 90_000 }, async (t) => {
  const dir = await useTempDir(t)
  const db = join(dir, 'store.db')
  const token = await adminToken(db)
  const server = await startServer(t, { dir, db, env: { ADMIN_PORT: 'off' } })
  assert.match(server.stdout(), /^ {2}Admin API: {3}off \(ADMIN_PORT=off\)/m)
  assert.equal((await request(`${server.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${token}` } })).status, 404)
  assert.equal((await request(`${server.url}/metrics`)).status, 404)
  assert.equal((await request(`${server.url}/healthz`)).status, 200)
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
