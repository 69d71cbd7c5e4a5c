/**
 * Three server processes on one PostgreSQL database and one Redis: a key update, a rotation, a
 * revocation, an expiry and a creation (the new key sent from a banned address) made through the
 * CLI reach every instance (the README says within 2 s: NOTIFY at once, the change-log poll every
 * KEY_REFRESH_MS as the safety net). The effect is
 * asserted on every instance with a generous bound; the measured propagation times are printed,
 * not asserted. `keys usage` reads the live counters from Redis, equal to the last headers.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { useScratchDatabase } from '../helpers/cluster.js'
import {
  bearer,
  createKeyViaCli,
  REVOCATION_DEADLINE_MS,
  request,
  runCli,
  type ServerProcess,
  sleep,
  startServer,
  useTempDir,
} from '../helpers/process.js'

type Json = Record<string, any>

/** The CLI with the servers' REDIS_URL (if any): `keys usage` then reads the live counters there. */
let cliEnv: Record<string, string> = {}

async function cliJson(args: string[], db: string): Promise<{ out: Json; exitedAt: number; ms: number }> {
  const r = await runCli([...args, '--json'], { db, env: cliEnv })
  const exitedAt = performance.now() // the change is committed before the CLI exits
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
  return { out: JSON.parse(r.stdout), exitedAt, ms: r.ms }
}

/**
 * Polls every instance (each on its own, every 50 ms) until `seen` holds for its answer; returns
 * how long after `since` each one first showed it. Fails after REVOCATION_DEADLINE_MS.
 */
async function reachEvery(
  servers: ServerProcess[],
  key: string,
  since: number,
  seen: (res: Awaited<ReturnType<typeof request>>) => boolean,
  what: string,
): Promise<number[]> {
  return Promise.all(
    servers.map(async (s) => {
      for (;;) {
        const res = await request(`${s.url}/v1/pets`, { headers: bearer(key) })
        if (seen(res)) return performance.now() - since
        if (performance.now() - since > REVOCATION_DEADLINE_MS)
          assert.fail(`${what} not seen on ${s.url} ${REVOCATION_DEADLINE_MS} ms after the CLI exited (last: ${res.status} ${res.text})`)
        await sleep(50)
      }
    }),
  )
}

let label = ''
const report = (what: string, times: number[], cliMs: number, after = 'the CLI exited') =>
  process.stdout.write(
    `[${label}] ${what} reached ${times.length} instance${times.length === 1 ? '' : 's'}: ${times.map((ms) => `${Math.max(0, ms).toFixed(0)} ms`).join(', ')} after ${after} ` +
      `(slowest ${Math.max(0, ...times).toFixed(0)} ms; the CLI ran ${cliMs.toFixed(0)} ms)\n`,
  )

interface Setup {
  name: string
  db: string
  dir: string
  /** Extra server environment. */
  env: Record<string, string>
  redis: boolean
  /** Server processes on the one database (default 3). */
  instances?: number
}

test('PostgreSQL + Redis (NOTIFY and polling): key changes made with the CLI reach all three instances', {
  timeout: 120_000,
}, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t, 'animal-store-keys-')
  await scenario(t, { name: 'PostgreSQL+Redis', dir, db: await useScratchDatabase(t, 'as_keys_'), env: { REDIS_URL }, redis: true })
})

test('SQLite + memory (polling only): key changes made with the CLI beside the server reach it', { timeout: 120_000 }, async (t) => {
  const dir = await useTempDir(t, 'animal-store-keys-')
  // One server per SQLite file (the file's lock refuses a second one): the CLI, a process of its
  // own, reaches it through the polled change log.
  await scenario(t, { name: 'SQLite+memory', dir, db: join(dir, 'store.db'), env: {}, redis: false, instances: 1 })
})

async function scenario(t: TestContext, setup: Setup): Promise<void> {
  const { dir, db } = setup
  label = setup.name
  cliEnv = setup.redis ? { REDIS_URL } : {}
  const servers = await Promise.all(
    ['a', 'b', 'c'].slice(0, setup.instances ?? 3).map((name) =>
      startServer(t, {
        dir,
        db,
        logFile: join(dir, `server-${name}.log`),
        env: { ...setup.env, BOOTSTRAP_KEY: 'false', LAST_USED_FLUSH_MS: '200' },
      }),
    ),
  )
  const pets = (s: ServerProcess, key: string) => request(`${s.url}/v1/pets`, { headers: bearer(key) })

  // Pro (300/min): room for the polling below without a 429.
  const created = await createKeyViaCli(db, { plan: 'pro', name: 'customer', env: cliEnv })
  for (const s of servers) assert.equal((await pets(s, created.key)).headers.get('x-ratelimit-limit'), '300', 'cached on every instance')

  // (1) Update: the new limits on every instance.
  const update = await cliJson(['keys', 'update', created.id, '--plan', 'enterprise', '--per-minute', '5000', '--per-day', '50000'], db)
  const updateTimes = await reachEvery(
    servers,
    created.key,
    update.exitedAt,
    (r) => r.headers.get('x-ratelimit-limit') === '5000',
    'the plan update',
  )
  report('update (pro -> enterprise 5000/min)', updateTimes, update.ms)

  // (2) Rotation with grace 0: the old key is refused everywhere; the successor continues the quota.
  const rotate = await cliJson(['keys', 'rotate', created.id, '--grace', '0'], db)
  const rotateTimes = await reachEvery(servers, created.key, rotate.exitedAt, (r) => r.status === 401, 'the rotation')
  report('rotation (grace 0)', rotateTimes, rotate.ms)
  const successor = rotate.out
  let last = await pets(servers[0]!, successor.key)
  for (const s of servers) {
    last = await pets(s, successor.key)
    assert.equal(last.status, 200)
    assert.equal(last.headers.get('x-ratelimit-limit'), '5000', 'the successor keeps the limits')
  }
  if (setup.redis) {
    // One quota across instances (Redis) and across the two keys. Redis counts the numbers the
    // instances' leases reserved (docs/limits.md, leases), so it has at most what the last answer
    // showed left, less only by numbers still unused in the instances' runs (at most
    // LIMITER_LEASE_MAX, 256, each). Compared on the day window (RateLimit's "day" item): the
    // minute can turn between the last answer and the read (a CI run on a busy machine saw a fresh
    // minute's 5000 left against the answer's 4989).
    const usage = (await cliJson(['keys', 'usage', successor.apiKey.id], db)).out
    const lastRemaining = Number(/"day";r=(\d+)/.exec(last.headers.get('ratelimit') ?? '')?.[1])
    assert.deepEqual([usage.source, usage.quotaId], ['redis', created.id])
    assert.ok(
      usage.day.remaining <= lastRemaining && usage.day.remaining > lastRemaining - servers.length * 256,
      `Redis has ${usage.day.remaining} left today, the last answer showed ${lastRemaining}`,
    )
    assert.ok(usage.day.used > 4, `the old key's requests count in the successor's quota (${usage.day.used} used today)`)
  }
  await sleep(400) // two LAST_USED_FLUSH_MS
  assert.equal(
    typeof (await cliJson(['keys', 'show', successor.apiKey.id], db)).out.lastUsedAt,
    'string',
    'last use flushed by the servers',
  )

  // (3) Revocation of the successor.
  const revoke = await cliJson(['keys', 'revoke', successor.apiKey.id], db)
  const revokeTimes = await reachEvery(servers, successor.key, revoke.exitedAt, (r) => r.status === 401, 'the revocation')
  report('revocation', revokeTimes, revoke.ms)

  // (4) Expiry set by an update on a cached key: each instance answers key_expired once it passes.
  const other = await createKeyViaCli(db, { plan: 'pro', name: 'expiring', env: cliEnv })
  for (const s of servers) assert.equal((await pets(s, other.key)).status, 200)
  // Far enough ahead to be in the future when the CLI checks it: a CLI start can take several
  // seconds on a loaded machine (5.6 s seen with two system test files running at once).
  const expiresAt = Date.now() + 10_000
  const expiry = await cliJson(['keys', 'update', other.id, '--expires-at', new Date(expiresAt).toISOString()], db)
  const expiredTimes = await reachEvery(
    servers,
    other.key,
    expiry.exitedAt + (expiresAt - Date.now()),
    (r) => r.status === 401 && (r.body as Json).code === 'key_expired',
    'the expiry',
  )
  report('expiry set by an update', expiredTimes, expiry.ms, 'the expiry instant')
  for (const s of servers) {
    const res = await pets(s, other.key)
    assert.equal((res.body as Json).message, `This API key expired at ${new Date(expiresAt).toISOString()}`)
  }

  // (5) A key created while its address is banned (a guesser behind the same address; every
  // request here comes from 127.0.0.1): each instance learns of it from the change log and then
  // judges it by its own plan, not as the banned address. Last: the ban outlasts the scenario.
  for (const s of servers) {
    let code = ''
    for (let i = 0; i < 200 && code !== 'key_banned'; i++) code = ((await request(`${s.url}/v1/pets`)).body as Json).code
    assert.equal(code, 'key_banned', `127.0.0.1 banned on ${s.url}`)
  }
  const created2 = await cliJson(['keys', 'create', '--plan', 'pro', '--name', 'behind a guesser'], db)
  const createTimes = await reachEvery(
    servers,
    created2.out.key,
    created2.exitedAt,
    (r) => r.status === 200 && r.headers.get('x-ratelimit-limit') === '300',
    'the new key from a banned address',
  )
  report('creation, from a banned address', createTimes, created2.ms)
  for (const s of servers) await s.stop()
}
