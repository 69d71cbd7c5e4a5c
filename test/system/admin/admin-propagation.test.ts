/**
 * Three server processes on one PostgreSQL database and one Redis: an update, a rotation and a
 * revocation made through the admin API of one instance (on its own listener, ADMIN_PORT) reach
 * all three (the README says within 2 s). The effect is asserted on every instance with a generous
 * bound; the propagation times are printed, not asserted.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { useScratchDatabase } from '../helpers/cluster.js'
import {
  bearer,
  freePort,
  REVOCATION_DEADLINE_MS,
  request,
  runCli,
  type ServerProcess,
  sleep,
  startServer,
  useTempDir,
} from '../helpers/process.js'

type Json = Record<string, any>

/** How long after `since` each instance first answers the key's request so that `seen` holds. */
function reachEvery(servers: ServerProcess[], key: string, since: number, seen: (r: Json) => boolean, what: string): Promise<number[]> {
  return Promise.all(
    servers.map(async (s) => {
      for (;;) {
        const res = await request(`${s.url}/v1/pets`, { headers: bearer(key) })
        if (seen(res)) return performance.now() - since
        if (performance.now() - since > REVOCATION_DEADLINE_MS)
          assert.fail(`${what} not seen on ${s.url} (last: ${res.status} ${res.text})`)
        await sleep(50)
      }
    }),
  )
}

test('PostgreSQL + Redis: changes made through the admin API reach all three instances', { timeout: 120_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t, 'animal-store-admin-')
  const db = await useScratchDatabase(t, 'as_admin_')
  const created = await runCli(['admin-tokens', 'create', '--name', 'ops', '--json'], { db })
  assert.equal(created.code, 0, created.stderr)
  const auth = { authorization: `Bearer ${JSON.parse(created.stdout).token}` }
  const adminPort = await freePort()
  const servers = await Promise.all(
    ['a', 'b', 'c'].map((name, i) =>
      startServer(t, {
        dir,
        db,
        logFile: join(dir, `server-${name}.log`),
        env: { REDIS_URL, BOOTSTRAP_KEY: 'false', ...(i === 0 ? { ADMIN_PORT: String(adminPort) } : {}) },
      }),
    ),
  )
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await request(`http://127.0.0.1:${adminPort}/admin/v1${path}`, { method, headers: auth, body })
    const answeredAt = performance.now() // the change is committed before the answer
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`)
    return { body: res.body as Json, answeredAt }
  }
  const report = (what: string, times: number[]) =>
    process.stdout.write(
      `[admin API, PostgreSQL+Redis] ${what} reached 3 instances: ${times.map((ms) => `${Math.max(0, ms).toFixed(0)} ms`).join(', ')} after the answer\n`,
    )

  const { body: made } = await admin('POST', '/keys', { plan: 'pro', name: 'customer' })
  for (const s of servers) {
    const res = await request(`${s.url}/v1/pets`, { headers: bearer(made.key) })
    assert.equal(res.headers.get('x-ratelimit-limit'), '300', 'cached on every instance')
  }

  const update = await admin('PATCH', `/keys/${made.apiKey.id}`, { plan: 'enterprise', perMinute: 5000, perDay: 50000 })
  report(
    'update (pro -> enterprise)',
    await reachEvery(servers, made.key, update.answeredAt, (r) => r.headers.get('x-ratelimit-limit') === '5000', 'the update'),
  )

  const rotation = await admin('POST', `/keys/${made.apiKey.id}/rotate`, { gracePeriodSeconds: 0 })
  report('rotation (grace 0)', await reachEvery(servers, made.key, rotation.answeredAt, (r) => r.status === 401, 'the rotation'))
  const successor = rotation.body.key as string
  for (const s of servers) assert.equal((await request(`${s.url}/v1/pets`, { headers: bearer(successor) })).status, 200)

  const revocation = await admin('POST', `/keys/${rotation.body.apiKey.id}/revoke`)
  report('revocation', await reachEvery(servers, successor, revocation.answeredAt, (r) => r.status === 401, 'the revocation'))
  for (const s of servers) await s.stop()
})
