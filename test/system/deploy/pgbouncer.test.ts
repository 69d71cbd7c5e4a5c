/**
 * The service through PgBouncer in transaction pooling mode (deploy/pgbouncer.ini), against a
 * throwaway PostgreSQL and a throwaway pgbouncer (test/system/helpers/proxies.ts): three instances start
 * together through it (migrations under a transaction-scoped lock), keys are managed with the CLI
 * through it, creates, lists, reads and idempotent creates work from every instance, and a
 * revocation reaches every instance: pushed (LISTEN on a direct connection, DATABASE_LISTEN_URL)
 * to two instances whose polling is slowed to a minute, polled by the third, whose LISTEN goes
 * through PgBouncer and so is lost. Under a concurrent load of 30 client connections (3 instances x
 * a pool of 10) PostgreSQL sees no more server connections than PgBouncer's pool plus the two
 * LISTEN connections: the count is asserted, the throughput printed.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { type Outcome, probe, tally, withPg } from '../helpers/cluster.js'
import { requireThrowaway, startThrowawayPostgres } from '../helpers/faults.js'
import {
  bearer,
  createKeyViaCli,
  REVOCATION_DEADLINE_MS,
  ROOT,
  request,
  runCli,
  type ServerProcess,
  sleep,
  startServer,
  useTempDir,
} from '../helpers/process.js'
import { startThrowawayPgBouncer } from '../helpers/proxies.js'

/** PgBouncer's server connections for the database: what PostgreSQL sees from the three instances. */
const POOL = 4
const LOAD_REQUESTS = 3_000
const LOOPS_PER_INSTANCE = 10
const ENTERPRISE_BIG = { plan: 'enterprise', perMinute: 1_000_000, perDay: 10_000_000 } as const

test('three instances share one PostgreSQL through PgBouncer in transaction pooling mode', { timeout: 150_000 }, async (t) => {
  if (!requireThrowaway(t, 'PostgreSQL', 'PgBouncer')) return
  const postgres = await startThrowawayPostgres(t)
  const bouncer = await startThrowawayPgBouncer(t, postgres, {
    default_pool_size: String(POOL),
    reserve_pool_size: '0',
    max_db_connections: String(POOL),
  })
  assert.equal(bouncer.settings.get('pool_mode'), 'transaction', 'deploy/pgbouncer.ini pools by transaction')
  const dir = await useTempDir(t, 'animal-store-pgbouncer-')
  const db = bouncer.url // the CLI and every instance's pool go through PgBouncer
  const direct = postgres.url
  const start = (name: string, env: Record<string, string>) =>
    startServer(t, { dir, db, logFile: join(dir, `server-${name}.log`), env: { BOOTSTRAP_KEY: 'false', ...env } })

  // a and b LISTEN on a direct connection and poll only once a minute: a revocation they see
  // within seconds was pushed. c LISTENs through PgBouncer (the default: DATABASE_URL), where
  // the LISTEN is lost with its server connection, and polls every second.
  const began = performance.now()
  const [a, b, c] = (await Promise.all([
    start('a', { DATABASE_LISTEN_URL: direct, KEY_REFRESH_MS: '60000' }),
    start('b', { DATABASE_LISTEN_URL: direct, KEY_REFRESH_MS: '60000' }),
    start('c', { KEY_REFRESH_MS: '1000' }),
  ])) as [ServerProcess, ServerProcess, ServerProcess]
  process.stdout.write(`3 instances healthy through PgBouncer in ${(performance.now() - began).toFixed(0)} ms\n`)
  const servers = [a, b, c]
  for (const s of servers) assert.equal((await request(`${s.url}/readyz`)).status, 200)
  const migrations = await withPg(direct, (pgc) => pgc.query('SELECT version FROM schema_migrations ORDER BY version'))
  assert.deepEqual(
    migrations.rows.map((r: { version: string }) => r.version),
    readdirSync(join(ROOT, 'src/storage/postgres/migrations'))
      .filter((f) => f.endsWith('.sql'))
      .sort(),
    'each migration applied exactly once by the three concurrent starts through PgBouncer',
  )

  const { key } = await createKeyViaCli(db, { ...ENTERPRISE_BIG, name: 'through pgbouncer' })
  const auth = bearer(key)

  await t.test('creates, reads and lists through every instance', async () => {
    const ids: number[] = []
    for (const [i, s] of servers.entries()) {
      const created = await request(`${s.url}/v1/pets`, { method: 'POST', headers: auth, body: { name: `pet ${i}`, categoryId: i } })
      assert.equal(created.status, 201, created.text)
      ids.push((created.body as { id: number }).id)
    }
    for (const s of servers) {
      for (const id of ids) assert.equal((await request(`${s.url}/v1/pets/${id}`, { headers: auth })).status, 200)
      const list = await request(`${s.url}/v1/pets?limit=100`, { headers: auth })
      assert.equal(list.status, 200, list.text)
      const listed = (list.body as { id: number }[]).map((p) => p.id)
      for (const id of ids) assert.ok(listed.includes(id), `${id} listed by ${s.url}`)
    }
  })

  await t.test('idempotent creates: the same key on three instances creates one pet', async () => {
    const headers = { ...auth, 'idempotency-key': 'pgbouncer-once' }
    const body = { name: 'Once', categoryId: 3 }
    const answers = []
    for (const s of servers) answers.push(await request(`${s.url}/v1/pets`, { method: 'POST', headers, body }))
    for (const answer of answers) assert.equal(answer.status, 201, answer.text)
    assert.deepEqual(
      answers.map((x) => x.headers.get('idempotent-replayed')),
      [null, 'true', 'true'],
    )
    assert.equal(new Set(answers.map((x) => (x.body as { id: number }).id)).size, 1, 'one pet')
    const reused = await request(`${c.url}/v1/pets`, { method: 'POST', headers, body: { ...body, name: 'Other' } })
    assert.equal(reused.status, 422, reused.text)
    assert.equal((reused.body as { code: string }).code, 'idempotency_key_reused')
  })

  await t.test(`a load of ${LOAD_REQUESTS} requests over 30 client connections uses ${POOL} server connections`, async () => {
    let maxServerConnections = 0
    let maxWaiting = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const [row] = await withPg(direct, (pgc) =>
          pgc.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'test' AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
          ),
        ).then((r) => r.rows)
        maxServerConnections = Math.max(maxServerConnections, row!.n)
        const pools = await bouncer.admin<{ database: string; cl_waiting: string }>('SHOW POOLS')
        for (const pool of pools) if (pool.database === 'test') maxWaiting = Math.max(maxWaiting, Number(pool.cl_waiting))
        await sleep(100)
      }
    })()
    const outcomes: Outcome[] = []
    let next = 0
    const loop = async (s: ServerProcess, target: number) => {
      for (let i = next++; i < LOAD_REQUESTS; i = next++) {
        if (i % 3 === 0) {
          const created = await request(`${s.url}/v1/pets`, { method: 'POST', headers: auth, body: { name: `load ${i}`, categoryId: 1 } })
          outcomes.push({ status: created.status, code: (created.body as { code?: string }).code, retryAfter: undefined, target })
        } else outcomes.push(await probe(`${s.url}/v1/pets?limit=20${i % 3 === 1 ? '&status=available' : ''}`, auth, 10_000, target))
      }
    }
    const loadStarted = performance.now()
    await Promise.all(servers.flatMap((s, target) => Array.from({ length: LOOPS_PER_INSTANCE }, () => loop(s, target))))
    const seconds = (performance.now() - loadStarted) / 1000
    sampling = false
    await sampler
    const counts = tally(outcomes)
    process.stdout.write(
      `through PgBouncer (pool ${POOL}): ${LOAD_REQUESTS} requests from ${servers.length * LOOPS_PER_INSTANCE} loops in ${seconds.toFixed(1)} s ` +
        `(${(LOAD_REQUESTS / seconds).toFixed(0)} req/s, 1/3 creates): ${JSON.stringify(counts)}; ` +
        `PostgreSQL client backends at most ${maxServerConnections} (pool ${POOL} + 2 LISTEN); clients waiting in PgBouncer at most ${maxWaiting}\n`,
    )
    assert.deepEqual(counts, { '200': (LOAD_REQUESTS * 2) / 3, '201': LOAD_REQUESTS / 3 }, 'every request succeeded')
    assert.ok(maxServerConnections <= POOL + 2, `PostgreSQL saw ${maxServerConnections} connections, more than pool ${POOL} + 2 LISTEN`)
  })

  await t.test('a revocation reaches every instance: pushed to direct LISTENs, polled by the other', async () => {
    const doomed = await createKeyViaCli(db, { ...ENTERPRISE_BIG, name: 'doomed' })
    for (const s of servers) assert.equal((await probe(`${s.url}/v1/pets?limit=1`, bearer(doomed.key))).status, 200)
    const refusedAt: (number | undefined)[] = servers.map(() => undefined)
    let stop = false
    const pollers = servers.map(async (s, i) => {
      while (!stop) {
        const o = await probe(`${s.url}/v1/pets?limit=1`, bearer(doomed.key))
        if (o.status === 401) {
          refusedAt[i] = Date.now()
          return
        }
        assert.equal(o.status, 200)
        await sleep(5)
      }
    })
    const revoke = await runCli(['keys', 'revoke', doomed.id], { db })
    assert.equal(revoke.code, 0, revoke.stderr)
    const deadline = setTimeout(() => (stop = true), REVOCATION_DEADLINE_MS)
    await Promise.all(pollers)
    clearTimeout(deadline)
    const { rows } = await withPg(direct, (pgc) => pgc.query('SELECT revoked_at FROM api_keys WHERE id = $1', [doomed.id]))
    const revokedAt = Number(rows[0].revoked_at)
    const delays = refusedAt.map((at) => (at === undefined ? 'never' : `${at - revokedAt} ms`))
    process.stdout.write(`revocation through PgBouncer: a (push) ${delays[0]}, b (push) ${delays[1]}, c (poll 1 s) ${delays[2]}\n`)
    for (const [i, at] of refusedAt.entries()) assert.ok(at !== undefined, `instance ${'abc'[i]} still accepted the revoked key`)
    assert.equal((await probe(`${a.url}/v1/pets`, auth)).status, 200, 'other keys unaffected')
  })

  for (const s of servers) assert.equal((await s.stop('SIGTERM')).code, 0, s.stderr())
})
