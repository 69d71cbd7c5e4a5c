/**
 * Dependency outages under load (fault injection with the machine's real PostgreSQL and Redis).
 *
 * PostgreSQL stopped while a steady load (list/create/get loops) runs against a server on
 * PostgreSQL + Redis: every request is answered within the timeout with a 2xx or a clear 503
 * `service_unavailable` Error body (never a 500, never a hang), /readyz is 503 naming the database
 * as down, the process stays up; PostgreSQL started again: requests succeed again without a
 * restart. Recovery time = from `pg_isready` OK to the first 201.
 *
 * Redis stopped (same kind of load, two servers): with the default REDIS_FAILURE_POLICY=open every
 * request still succeeds on the local limiter, /readyz stays 200 showing the limiter down, and
 * animal_store_limiter_fallback_total grows; with REDIS_FAILURE_POLICY=closed /v1 gets 503
 * `service_unavailable` and /readyz 503. Redis started again: the open server decides in Redis again
 * (its hash reappears and counts every request, the fallback counter stops) and the closed one
 * serves again, both without a restart. Recovery time = from `redis-cli ping` PONG to that.
 *
 * Before each stop the test waits until no benchmark or other service test is running
 * (helpers/faults.ts); both services are started again in a finally block, in t.after and on exit.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import { useScratchDatabase, waitFor } from '../helpers/cluster.js'
import {
  ensureServicesRunning,
  idleWaitBudgetMs,
  installServiceGuard,
  mayStopSharedServices,
  pgReady,
  redisPong,
  startPostgres,
  startRedis,
  stopPostgres,
  stopRedis,
  waitForSharedServicesIdle,
} from '../helpers/faults.js'
import { bearer, createKeyViaCli, sleep, startServer, useTempDir, type ServerProcess } from '../helpers/process.js'
import { REDIS_URL, requireService } from '../helpers/services.js'

/** No request may take longer than this, outage or not. */
const REQUEST_TIMEOUT_MS = 8_000
/** How long a dependency stays down once the service has noticed. */
const OUTAGE_MS = 4_000
const LOOPS_PER_SERVER = 3

// ---------------------------------------------------------------------------------------------
// A steady load that records every request.

type Op = 'list' | 'create' | 'get'

interface Sample {
  server: string
  op: Op
  start: number
  end: number
  status: number
  /** The Error body's code for a non-2xx. */
  code?: string
  /** A transport failure or a timeout: never acceptable. */
  error?: string
  /** What is wrong with the response (malformed Error body, missing Retry-After...). */
  problem?: string
}

interface Target {
  name: string
  server: ServerProcess
  key: string
}

class Load {
  readonly samples: Sample[] = []
  private running = true
  /** While set, the loops idle (e.g. while waiting for other users of the services to finish). */
  paused = false
  private readonly loops: Promise<void>[] = []
  private readonly created = new Map<string, number[]>()
  private seq = 0

  constructor(targets: Target[], loopsPerTarget: number) {
    for (const target of targets) {
      this.created.set(target.name, [])
      for (let i = 0; i < loopsPerTarget; i++) this.loops.push(this.loop(target, i))
    }
  }

  private async loop(target: Target, offset: number): Promise<void> {
    const ops: Op[] = ['create', 'list', 'get']
    for (let i = offset; this.running; i++) {
      if (this.paused) {
        await sleep(100)
        continue
      }
      await this.once(target, ops[i % ops.length]!)
      await sleep(10)
    }
  }

  private async once(target: Target, op: Op): Promise<void> {
    const ids = this.created.get(target.name)!
    let path = '/v1/pets?limit=5'
    const init: RequestInit = { headers: bearer(target.key), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }
    if (op === 'create') {
      const n = this.seq++
      init.method = 'POST'
      init.headers = { ...bearer(target.key), 'content-type': 'application/json' }
      init.body = JSON.stringify({ name: `outage-${n}`, categoryId: n, status: 'available' })
      path = '/v1/pets'
    } else if (op === 'get' && ids.length > 0) {
      path = `/v1/pets/${ids[Math.floor(Math.random() * ids.length)]}`
    }
    const start = performance.now()
    const sample: Sample = { server: target.name, op, start, end: 0, status: 0 }
    try {
      const res = await fetch(target.server.url + path, init)
      const text = await res.text()
      sample.end = performance.now()
      sample.status = res.status
      if (res.status >= 200 && res.status < 300) {
        if (op === 'create') {
          const pet = JSON.parse(text) as { id: number; name: string }
          if (res.status !== 201 || typeof pet.id !== 'number') sample.problem = `create answered ${res.status} ${text}`
          else ids.push(pet.id)
        }
      } else {
        let body: { code?: unknown; message?: unknown; status?: unknown } = {}
        try {
          body = JSON.parse(text)
        } catch {
          sample.problem = `non-JSON ${res.status} body: ${text.slice(0, 200)}`
        }
        sample.code = typeof body.code === 'string' ? body.code : undefined
        if (typeof body.message !== 'string' || body.status !== res.status) sample.problem ??= `not an Error body: ${text.slice(0, 200)}`
        if (res.status === 503 && res.headers.get('retry-after') === null) sample.problem ??= '503 without Retry-After'
      }
    } catch (error) {
      sample.end = performance.now()
      sample.error = (error as Error).name === 'TimeoutError' ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : String(error)
    }
    this.samples.push(sample)
  }

  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.loops)
  }

  /** Samples of one server that overlap [from, to]. */
  during(server: string, from: number, to: number): Sample[] {
    return this.samples.filter((s) => s.server === server && s.end >= from && s.start <= to)
  }

  /** Samples of one server that started after `from` and ended before `to`. */
  within(server: string, from: number, to: number): Sample[] {
    return this.samples.filter((s) => s.server === server && s.start >= from && s.end <= to)
  }
}

const label = (s: Sample) => s.error ?? (s.status >= 300 ? `${s.status} ${s.code ?? '?'}` : String(s.status))

function tally(samples: Sample[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const s of samples) counts[label(s)] = (counts[label(s)] ?? 0) + 1
  return counts
}

/** Every request answered in time, with a 2xx or a well-formed 503 service_unavailable; nothing else. */
function assertOnlySuccessOr503(samples: Sample[], what: string): void {
  const bad = samples.filter(
    (s) => s.error !== undefined || s.problem !== undefined || !((s.status >= 200 && s.status < 300) || (s.status === 503 && s.code === 'service_unavailable')),
  )
  assert.deepEqual(
    bad.slice(0, 5).map((s) => `${s.op}: ${label(s)} ${s.problem ?? ''}`),
    [],
    `${what}: ${bad.length} requests were neither 2xx nor 503 service_unavailable (${JSON.stringify(tally(samples))})`,
  )
  const slowest = Math.max(0, ...samples.map((s) => s.end - s.start))
  assert.ok(slowest < REQUEST_TIMEOUT_MS, `${what}: slowest request ${slowest.toFixed(0)} ms`)
}

const maxLatency = (samples: Sample[]) => Math.max(0, ...samples.map((s) => s.end - s.start))

// ---------------------------------------------------------------------------------------------
// Probes.

interface Readiness {
  status: number
  body: { status?: string; checks?: { database?: { status?: string }; rateLimiter?: { status?: string } } }
  ms: number
}

async function readyz(server: ServerProcess): Promise<Readiness> {
  const started = performance.now()
  const res = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  const body = (await res.json()) as Readiness['body']
  return { status: res.status, body, ms: performance.now() - started }
}

async function waitForReadiness(server: ServerProcess, want: (r: Readiness) => boolean, timeoutMs: number): Promise<Readiness> {
  let last: Readiness | undefined
  const ok = await waitFor(async () => want((last = await readyz(server))), timeoutMs, 100)
  assert.ok(ok, `/readyz did not reach the expected state within ${timeoutMs} ms; last: ${JSON.stringify(last)}`)
  return last!
}

async function healthz(server: ServerProcess): Promise<number> {
  const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  await res.arrayBuffer()
  return res.status
}

/** animal_store_limiter_fallback_total{policy} from /metrics (0 while absent). */
async function fallbackTotal(server: ServerProcess, policy: 'open' | 'closed'): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  const text = await res.text()
  const match = new RegExp(`^animal_store_limiter_fallback_total\\{policy="${policy}"\\} (\\d+(?:\\.\\d+)?)$`, 'm').exec(text)
  return match ? Number(match[1]) : 0
}

function assertAlive(server: ServerProcess, what: string): void {
  assert.equal(server.child.exitCode, null, `${what}: the server process is still running\n${server.stderr()}`)
  assert.equal(server.child.signalCode, null, `${what}: the server process is still running`)
  assert.doesNotMatch(server.stderr(), /unhandled|uncaught/i, `${what}: nothing unhandled on stderr`)
}

/** After a clean stop: no fatal log line and nothing unhandled (log lines are pino JSON). */
async function assertCleanExit(server: ServerProcess, what: string): Promise<void> {
  const stopped = await server.stop('SIGTERM')
  assert.equal(stopped.code, 0, `${what}: exits 0 on SIGTERM after the outage`)
  const fatal = readFileSync(server.logFile, 'utf8')
    .split('\n')
    .filter((line) => /"level":60|unhandled|uncaught/i.test(line))
  assert.deepEqual(fatal.slice(0, 3), [], `${what}: no fatal or unhandled error logged`)
}

/**
 * Waits until nobody else uses the services (or skips/fails, see mayStopSharedServices), then
 * installs the restarts. Called first, so its t.after runs before every other cleanup (t.after
 * hooks run in registration order): the scratch database is dropped with PostgreSQL up again.
 */
async function guardServices(t: TestContext): Promise<boolean> {
  if (!(await mayStopSharedServices(t))) return false
  installServiceGuard()
  t.after(ensureServicesRunning)
  return true
}

/** Right before a stop: someone may have started meanwhile; wait for them with the load paused. */
async function politeStop(load: Load, stop: () => Promise<void>): Promise<void> {
  load.paused = true
  try {
    assert.ok(await waitForSharedServicesIdle(), 'other users of PostgreSQL/Redis kept running; not stopping it under them')
  } finally {
    load.paused = false
  }
  await stop()
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`

// ---------------------------------------------------------------------------------------------

test(
  'PostgreSQL outage under load: fast 503s, /readyz names the database, recovery without a restart',
  { timeout: 120_000 + idleWaitBudgetMs(2) },
  async (t) => {
    if (!(await requireService(t, 'PostgreSQL')) || !(await requireService(t, 'Redis'))) return
    if (!(await guardServices(t))) return
    const dir = await useTempDir(t, 'animal-store-faults-')
    const url = await useScratchDatabase(t, 'as_scale_')
    const { key } = await createKeyViaCli(url, { plan: 'enterprise', name: 'outage', perMinute: 10_000_000, perDay: 100_000_000 })
    const server = await startServer(t, { dir, db: url, env: { REDIS_URL, LOG_LEVEL: 'warn' } })
    const load = new Load([{ name: 'pg', server, key }], LOOPS_PER_SERVER)
    try {
      await sleep(1_500)
      const baseline = load.samples.slice()
      assert.ok(baseline.length > 20, `the load runs (${baseline.length} requests)`)
      assert.ok(
        baseline.every((s) => s.status >= 200 && s.status < 300),
        `baseline: every request succeeds ${JSON.stringify(tally(baseline))}`,
      )
      assert.equal((await readyz(server)).status, 200)

      // --- PostgreSQL down.
      let stopIssued = 0
      await politeStop(load, async () => {
        stopIssued = performance.now()
        await stopPostgres()
      })
      const stopped = performance.now()
      const down = await waitForReadiness(server, (r) => r.status === 503, 10_000)
      const noticedAt = performance.now()
      assert.deepEqual(down.body.status, 'unavailable')
      assert.equal(down.body.checks?.database?.status, 'down', '/readyz names the database as down')
      assert.equal(down.body.checks?.rateLimiter?.status, 'up', '/readyz: the rate limiter is still up')
      assert.ok(down.ms < 2_000, `/readyz answers fast while the database is down (${fmt(down.ms)})`)
      await sleep(OUTAGE_MS)
      assert.equal(await healthz(server), 200, '/healthz: the process is alive during the outage')
      assertAlive(server, 'during the PostgreSQL outage')
      const startIssued = performance.now()

      // --- PostgreSQL back.
      await startPostgres()
      assert.ok(await waitFor(pgReady, 30_000, 50), 'pg_isready OK after start')
      const readyAt = performance.now()
      const recovered = await waitFor(() => load.samples.some((s) => s.op === 'create' && s.status === 201 && s.end >= readyAt), 15_000, 10)
      assert.ok(recovered, `a create succeeds again within 15 s of pg_isready, without a restart (${JSON.stringify(tally(load.during('pg', readyAt, performance.now())))})`)
      const first201 = Math.min(...load.samples.filter((s) => s.op === 'create' && s.status === 201 && s.end >= readyAt).map((s) => s.end))
      const recoveryMs = first201 - readyAt
      const readyAgain = await waitForReadiness(server, (r) => r.status === 200, 10_000)
      const readyzRecoveryMs = performance.now() - readyAt
      assert.equal(readyAgain.body.checks?.database?.status, 'up')
      await sleep(1_000)
      const end = performance.now()
      await load.stop()

      // Every request of the whole run: in time, 2xx or a clear 503; never a 500 or a hang.
      assertOnlySuccessOr503(load.samples, 'whole run')
      // While the database was known to be down, nothing succeeded and everything was a 503.
      const whileDown = load.within('pg', noticedAt, startIssued)
      assert.ok(whileDown.length > 20, `requests were made during the outage (${whileDown.length})`)
      assert.deepEqual(tally(whileDown), { '503 service_unavailable': whileDown.length }, 'every request while the database is down: 503')
      for (const op of ['list', 'create', 'get'] as const) assert.ok(whileDown.some((s) => s.op === op), `some ${op} during the outage`)
      // After recovery, everything succeeds again.
      const afterRecovery = load.within('pg', first201 + 200, end)
      assert.ok(afterRecovery.length > 10, 'requests after the recovery')
      assert.ok(afterRecovery.every((s) => s.status >= 200 && s.status < 300), `after recovery: ${JSON.stringify(tally(afterRecovery))}`)
      assertAlive(server, 'after the PostgreSQL outage')
      await assertCleanExit(server, 'PostgreSQL outage')

      const outage = load.during('pg', stopIssued, first201)
      const first503 = Math.min(...load.samples.filter((s) => s.status === 503).map((s) => s.end))
      process.stdout.write(
        `[faults] PostgreSQL outage: stop took ${fmt(stopped - stopIssued)}, first 503 ${fmt(first503 - stopIssued)} after the stop began, ` +
          `/readyz 503 (database down) ${fmt(noticedAt - stopped)} after it ended; ${whileDown.length} requests while down, all 503 service_unavailable; ` +
          `max request latency during the outage ${fmt(maxLatency(outage))} (${outage.length} requests: ${JSON.stringify(tally(outage))}); ` +
          `recovery: pg_isready OK -> first 201 ${fmt(recoveryMs)}, -> /readyz 200 ${fmt(readyzRecoveryMs)}; no restart (pid ${server.pid} throughout)\n`,
      )
      assert.ok(recoveryMs < 5_000, `recovery within 5 s (${fmt(recoveryMs)})`)
    } finally {
      await load.stop()
      await ensureServicesRunning()
    }
  },
)

test(
  'Redis outage under load: fail-open keeps serving on local limits, fail-closed 503s, both recover without a restart',
  { timeout: 120_000 + idleWaitBudgetMs(2) },
  async (t) => {
    if (!(await requireService(t, 'PostgreSQL')) || !(await requireService(t, 'Redis'))) return
    if (!(await guardServices(t))) return
    const dir = await useTempDir(t, 'animal-store-faults-')
    const url = await useScratchDatabase(t, 'as_scale_')
    // One key per server, so that each one's Redis hash shows that server's decisions.
    const openKey = await createKeyViaCli(url, { plan: 'enterprise', name: 'open', perMinute: 10_000_000, perDay: 100_000_000 })
    const closedKey = await createKeyViaCli(url, { plan: 'enterprise', name: 'closed', perMinute: 10_000_000, perDay: 100_000_000 })
    const [open, closed] = await Promise.all([
      startServer(t, { dir, db: url, logFile: join(dir, 'open.log'), env: { REDIS_URL, LOG_LEVEL: 'warn' } }),
      startServer(t, { dir, db: url, logFile: join(dir, 'closed.log'), env: { REDIS_URL, REDIS_FAILURE_POLICY: 'closed', LOG_LEVEL: 'warn' } }),
    ])
    const openHash = `as:rl:{k:${openKey.id}}`
    const redisClient = () => {
      const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 1_000, enableOfflineQueue: false, retryStrategy: () => null })
      client.on('error', () => {})
      return client
    }
    const load = new Load(
      [
        { name: 'open', server: open, key: openKey.key },
        { name: 'closed', server: closed, key: closedKey.key },
      ],
      LOOPS_PER_SERVER,
    )
    try {
      await sleep(1_500)
      const baseline = load.samples.slice()
      assert.ok(baseline.every((s) => s.status >= 200 && s.status < 300), `baseline: every request succeeds ${JSON.stringify(tally(baseline))}`)
      for (const server of [open, closed]) {
        const r = await readyz(server)
        assert.equal(r.status, 200)
        assert.equal(r.body.checks?.rateLimiter?.status, 'up')
      }
      const fallbackBefore = await fallbackTotal(open, 'open')

      // --- Redis down.
      let stopIssued = 0
      await politeStop(load, async () => {
        stopIssued = performance.now()
        await stopRedis()
      })
      const stopped = performance.now()
      const openDown = await waitForReadiness(open, (r) => r.body.checks?.rateLimiter?.status === 'down', 10_000)
      assert.equal(openDown.status, 200, 'fail-open: /readyz stays 200 while Redis is down')
      assert.equal(openDown.body.status, 'degraded', 'fail-open: ready, but degraded')
      assert.equal(openDown.body.checks?.database?.status, 'up')
      const closedDown = await waitForReadiness(closed, (r) => r.status === 503, 10_000)
      const noticedAt = performance.now()
      assert.equal(closedDown.body.checks?.rateLimiter?.status, 'down', 'fail-closed: /readyz 503 names the rate limiter')
      assert.equal(closedDown.body.checks?.database?.status, 'up')
      const fallbackEarly = await fallbackTotal(open, 'open')
      await sleep(OUTAGE_MS)
      const fallbackLate = await fallbackTotal(open, 'open')
      assert.ok(fallbackEarly > fallbackBefore, `fallback counter grows (${fallbackBefore} -> ${fallbackEarly})`)
      assert.ok(fallbackLate > fallbackEarly, `fallback counter keeps growing during the outage (${fallbackEarly} -> ${fallbackLate})`)
      assert.ok((await fallbackTotal(closed, 'closed')) > 0, 'the closed server counts its refusals')
      assert.equal((await readyz(open)).status, 200, 'fail-open: still ready at the end of the outage')
      for (const server of [open, closed]) assertAlive(server, 'during the Redis outage')
      const startIssued = performance.now()

      // --- Redis back.
      await startRedis()
      assert.ok(await waitFor(redisPong, 10_000, 20), 'redis-cli ping PONG after start')
      const upAt = performance.now()
      const client = redisClient()
      t.after(() => client.disconnect())
      await client.connect()
      // The open server decides in Redis again: its hash (gone with the restart: nosave) reappears.
      assert.ok(await waitFor(async () => (await client.exists(openHash)) === 1, 10_000, 10), 'the open server writes its decisions to Redis again')
      const openRecoveryMs = performance.now() - upAt
      const closedRecovered = await waitFor(
        () => load.samples.some((s) => s.server === 'closed' && s.status >= 200 && s.status < 300 && s.end >= upAt),
        10_000,
        10,
      )
      assert.ok(closedRecovered, 'fail-closed: requests succeed again without a restart')
      const closedRecoveryMs = Math.min(...load.samples.filter((s) => s.server === 'closed' && s.status < 300 && s.end >= upAt).map((s) => s.end)) - upAt
      const openUp = await waitForReadiness(open, (r) => r.body.checks?.rateLimiter?.status === 'up', 10_000)
      assert.equal(openUp.status, 200)
      const closedUp = await waitForReadiness(closed, (r) => r.status === 200, 10_000)
      assert.equal(closedUp.body.checks?.rateLimiter?.status, 'up')
      const readyzRecoveryMs = performance.now() - upAt

      // Decisions come from Redis again: the fallback counter stops while the load goes on...
      await sleep(300) // requests that were already deciding locally when Redis came back
      const fallbackAfter = await fallbackTotal(open, 'open')
      const countedBefore = Number(await client.hget(openHash, 'dc'))
      await sleep(1_500)
      assert.equal(await fallbackTotal(open, 'open'), fallbackAfter, 'no more local decisions once Redis is back')
      const countedAfter = Number(await client.hget(openHash, 'dc'))
      assert.ok(countedAfter > countedBefore, `Redis counts the open server's requests (${countedBefore} -> ${countedAfter})`)
      const end = performance.now()
      await load.stop()
      // ...and every request is counted there, one for one.
      const quiet = Number(await client.hget(openHash, 'dc'))
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${open.url}/v1/pets?limit=1`, { headers: bearer(openKey.key), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
        await res.arrayBuffer()
        assert.equal(res.status, 200)
      }
      assert.equal(Number(await client.hget(openHash, 'dc')), quiet + 10, '10 requests -> 10 counts in Redis')

      // Fail-open: not one request failed, before, during or after the outage.
      const openAll = load.samples.filter((s) => s.server === 'open')
      assertOnlySuccessOr503(openAll, 'fail-open server')
      assert.ok(openAll.every((s) => s.status >= 200 && s.status < 300), `fail-open: every request succeeded ${JSON.stringify(tally(openAll))}`)
      const openDuring = load.within('open', stopped, startIssued)
      assert.ok(openDuring.length > 20, `fail-open: requests during the outage (${openDuring.length})`)
      // Fail-closed: 503 service_unavailable while down, 2xx before and after.
      const closedAll = load.samples.filter((s) => s.server === 'closed')
      assertOnlySuccessOr503(closedAll, 'fail-closed server')
      const closedDuring = load.within('closed', noticedAt, startIssued)
      assert.ok(closedDuring.length > 20, `fail-closed: requests during the outage (${closedDuring.length})`)
      assert.deepEqual(tally(closedDuring), { '503 service_unavailable': closedDuring.length }, 'fail-closed: every request while Redis is down: 503')
      const closedAfter = load.within('closed', upAt + closedRecoveryMs + 200, end)
      assert.ok(closedAfter.length > 10 && closedAfter.every((s) => s.status < 300), `fail-closed after recovery: ${JSON.stringify(tally(closedAfter))}`)
      for (const server of [open, closed]) {
        assertAlive(server, 'after the Redis outage')
        await assertCleanExit(server, `Redis outage (${server === open ? 'open' : 'closed'})`)
      }

      const openOutage = load.during('open', stopIssued, upAt + openRecoveryMs)
      const closedOutage = load.during('closed', stopIssued, upAt + closedRecoveryMs)
      process.stdout.write(
        `[faults] Redis outage: stop took ${fmt(stopped - stopIssued)}; fail-open: ${openDuring.length} requests while down, all 2xx ` +
          `(max latency ${fmt(maxLatency(openOutage))}), fallback_total ${fallbackBefore} -> ${fallbackLate}, /readyz 200 with the limiter down; ` +
          `fail-closed: ${closedDuring.length} requests while down, all 503 service_unavailable (max latency ${fmt(maxLatency(closedOutage))}), /readyz 503; ` +
          `recovery from PONG: fail-open deciding in Redis again ${fmt(openRecoveryMs)}, fail-closed first 2xx ${fmt(closedRecoveryMs)}, ` +
          `both /readyz up ${fmt(readyzRecoveryMs)}; fallback counter flat afterwards (${fallbackAfter}); no restart (pids ${open.pid}, ${closed.pid})\n`,
      )
      assert.ok(openRecoveryMs < 5_000, `fail-open recovery within 5 s (${fmt(openRecoveryMs)})`)
      assert.ok(closedRecoveryMs < 5_000, `fail-closed recovery within 5 s (${fmt(closedRecoveryMs)})`)
    } finally {
      await load.stop()
      await ensureServicesRunning()
    }
  },
)
