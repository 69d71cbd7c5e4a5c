/**
 * Dependency outages under load (fault injection), against throwaway PostgreSQL and Redis servers
 * each test starts for itself (test/system/helpers/faults.ts): the machine's shared servers are never
 * stopped, restarted or even used here.
 *
 * PostgreSQL down while a steady load (create/list/get loops) runs against a server on PostgreSQL +
 * Redis, twice on the same server: first a clean stop (fast shutdown: sessions are terminated),
 * then a crash (SIGKILL to the postmaster and every backend; the restart runs crash recovery).
 * Each time every request is answered in time with a 2xx or a clear 503 `service_unavailable`
 * Error body (never a 500, never a hang), /readyz is 503 naming the database as down while the rate
 * limiter stays up, the process stays up; PostgreSQL started again: creates succeed again without a
 * restart of the service, and everything after the first success succeeds.
 *
 * Redis stopped (same kind of load, two servers): with the default REDIS_FAILURE_POLICY=open every
 * request still succeeds on the local limiter, /readyz stays 200 showing the limiter down, and
 * animal_store_limiter_fallback_total grows; with REDIS_FAILURE_POLICY=closed /v1 gets 503
 * `service_unavailable` and /readyz 503. Redis started again: the open server decides in Redis again
 * (its hash reappears and counts every request, the fallback counter stops) and the closed one
 * serves again, both without a restart.
 *
 * Nothing here asserts a duration beyond "no hang" (REQUEST_TIMEOUT_MS) and generous recovery
 * bounds (RECOVERY_MS); the measured times are printed for information.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { Redis } from 'ioredis'
import { REDIS_KEY_PREFIX } from '../../../tools/service-env.mjs'
import { waitFor } from '../helpers/cluster.js'
import { requireThrowaway, startThrowawayPostgres, startThrowawayRedis, type ThrowawayServer } from '../helpers/faults.js'
import { bearer, createKeyViaCli, type ServerProcess, sleep, startServer, useTempDir } from '../helpers/process.js'

/** No request may take longer than this, outage or not: the "never a hang" bound. */
const REQUEST_TIMEOUT_MS = 10_000
/** Generous bound for noticing an outage and for recovering from one, on a busy machine. */
const RECOVERY_MS = 15_000
/** How long a dependency stays down once the service has noticed. */
const OUTAGE_MS = 3_000
const LOOPS_PER_SERVER = 3
const TEST_TIMEOUT_MS = 150_000

// ---------------------------------------------------------------------------------------------
// A steady load that records every request.

type Op = 'list' | 'create' | 'get'

interface Sample {
  server: string
  op: Op
  start: number
  end: number
  status: number
  /** The animal a get asked for. */
  id?: number
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
      await this.once(target, ops[i % ops.length]!)
      await sleep(10)
    }
  }

  private async once(target: Target, op: Op): Promise<void> {
    const ids = this.created.get(target.name)!
    let path = '/v1/pets?limit=5'
    let id: number | undefined
    const init: RequestInit = { headers: bearer(target.key), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }
    if (op === 'create') {
      const n = this.seq++
      init.method = 'POST'
      init.headers = { ...bearer(target.key), 'content-type': 'application/json' }
      init.body = JSON.stringify({ name: `outage-${n}`, categoryId: n, status: 'available' })
      path = '/v1/pets'
    } else if (op === 'get' && ids.length > 0) {
      id = ids[Math.floor(Math.random() * ids.length)]!
      path = `/v1/pets/${id}`
    }
    const start = performance.now()
    const sample: Sample = { server: target.name, op, start, end: 0, status: 0, ...(id === undefined ? {} : { id }) }
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
    (s) =>
      s.error !== undefined ||
      s.problem !== undefined ||
      !((s.status >= 200 && s.status < 300) || (s.status === 503 && s.code === 'service_unavailable')),
  )
  assert.deepEqual(
    bad.slice(0, 5).map((s) => `${s.op}: ${label(s)} ${s.problem ?? ''}`),
    [],
    `${what}: ${bad.length} requests were neither 2xx nor 503 service_unavailable (${JSON.stringify(tally(samples))})`,
  )
  // "In time" is the sampler's own abort at REQUEST_TIMEOUT_MS: a request it cut off has an error.
}

const maxLatency = (samples: Sample[]) => Math.max(0, ...samples.map((s) => s.end - s.start))

// ---------------------------------------------------------------------------------------------
// Probes.

interface Readiness {
  status: number
  body: { status?: string; checks?: { database?: { status?: string }; rateLimiter?: { status?: string } } }
}

async function readyz(server: ServerProcess): Promise<Readiness> {
  const res = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  const body = (await res.json()) as Readiness['body']
  return { status: res.status, body }
}

async function waitForReadiness(server: ServerProcess, want: (r: Readiness) => boolean, timeoutMs: number): Promise<Readiness> {
  let last: Readiness | undefined
  const ok = await waitFor(
    async () => {
      last = await readyz(server)
      return want(last)
    },
    timeoutMs,
    100,
  )
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
  const res = await fetch(`${server.adminUrl}/metrics`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
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
    .filter((line) => /"level":"fatal"|unhandled|uncaught/i.test(line))
  assert.deepEqual(fatal.slice(0, 3), [], `${what}: no fatal or unhandled error logged`)
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`

// ---------------------------------------------------------------------------------------------

interface PostgresOutage {
  how: 'stop' | 'kill'
  /** /readyz first said the database is down. */
  noticedAt: number
  /** PostgreSQL was being started again. */
  startIssued: number
  /** PostgreSQL answered again. */
  readyAt: number
  /** The first create that succeeded after that. */
  first201: number
  /** /readyz 200 again. */
  readyzAt: number
  end: number
}

/** One outage of `pg` while `load` runs against `server`: down (stop or crash), noticed, up again, recovered. */
async function postgresOutage(how: 'stop' | 'kill', pg: ThrowawayServer, server: ServerProcess, load: Load): Promise<PostgresOutage> {
  const what = `PostgreSQL ${how === 'stop' ? 'stopped' : 'killed'}`
  await (how === 'stop' ? pg.stop() : pg.kill())
  const down = await waitForReadiness(server, (r) => r.status === 503, RECOVERY_MS)
  const noticedAt = performance.now()
  assert.equal(down.body.status, 'unavailable', `${what}: /readyz says unavailable`)
  assert.equal(down.body.checks?.database?.status, 'down', `${what}: /readyz names the database as down`)
  assert.equal(down.body.checks?.rateLimiter?.status, 'up', `${what}: /readyz: the rate limiter is still up`)
  await sleep(OUTAGE_MS)
  assert.equal(await healthz(server), 200, `${what}: /healthz: the process is alive during the outage`)
  assertAlive(server, `${what}: during the outage`)

  const startIssued = performance.now()
  await pg.start()
  const readyAt = performance.now()
  const createdSince = (from: number) => load.samples.filter((s) => s.op === 'create' && s.status === 201 && s.start >= from)
  const recovered = await waitFor(() => createdSince(readyAt).length > 0, RECOVERY_MS, 10)
  assert.ok(
    recovered,
    `${what}: a create succeeds again within ${RECOVERY_MS} ms of PostgreSQL answering, without a restart ${JSON.stringify(tally(load.during('pg', readyAt, performance.now())))}`,
  )
  const first201 = Math.min(...createdSince(readyAt).map((s) => s.end))
  const up = await waitForReadiness(server, (r) => r.status === 200, RECOVERY_MS)
  const readyzAt = performance.now()
  assert.equal(up.body.checks?.database?.status, 'up', `${what}: /readyz: the database is up again`)
  await sleep(1_000)
  return { how, noticedAt, startIssued, readyAt, first201, readyzAt, end: performance.now() }
}

/**
 * What the samples of one outage must show: all 2xx after recovery, and while down all 503, a get
 * of an animal this instance had already answered too (an order may have changed it since: no
 * instance keeps a copy of an animal on PostgreSQL, docs/deployment.md).
 */
function assertOutageSamples(load: Load, o: PostgresOutage): string {
  const what = `PostgreSQL ${o.how === 'stop' ? 'stopped' : 'killed'}`
  const whileDown = load.within('pg', o.noticedAt, o.startIssued)
  assert.ok(whileDown.length > 10, `${what}: requests were made during the outage (${whileDown.length})`)
  assert.deepEqual(
    tally(whileDown),
    { '503 service_unavailable': whileDown.length },
    `${what}: every request while the database is down: 503`,
  )
  for (const op of ['list', 'create', 'get'] as const)
    assert.ok(
      whileDown.some((s) => s.op === op),
      `${what}: some ${op} during the outage`,
    )
  const afterRecovery = load.within('pg', o.first201 + 200, o.end)
  assert.ok(afterRecovery.length > 5, `${what}: requests after the recovery (${afterRecovery.length})`)
  assert.ok(
    afterRecovery.every((s) => s.status >= 200 && s.status < 300),
    `${what}: after recovery ${JSON.stringify(tally(afterRecovery))}`,
  )
  return (
    `${what}: ${whileDown.length} requests while down, all 503 service_unavailable; ` +
    `PostgreSQL answering -> first 201 ${fmt(o.first201 - o.readyAt)}, -> /readyz 200 ${fmt(o.readyzAt - o.readyAt)}`
  )
}

test('PostgreSQL outage under load (clean stop, then crash): 503s, /readyz names the database, recovery without a restart', {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  if (!requireThrowaway(t, 'PostgreSQL', 'Redis')) return
  const [pg, redis] = await Promise.all([startThrowawayPostgres(t), startThrowawayRedis(t)])
  const dir = await useTempDir(t, 'animal-store-faults-')
  const { key } = await createKeyViaCli(pg.url, { plan: 'enterprise', name: 'outage', perMinute: 10_000_000, perDay: 100_000_000 })
  const server = await startServer(t, { dir, db: pg.url, env: { REDIS_URL: redis.url, LOG_LEVEL: 'warn' } })
  const load = new Load([{ name: 'pg', server, key }], LOOPS_PER_SERVER)
  try {
    await waitFor(() => load.samples.length > 20, RECOVERY_MS, 50)
    const baseline = load.samples.slice()
    assert.ok(baseline.length > 20, `the load runs (${baseline.length} requests)`)
    assert.ok(
      baseline.every((s) => s.status >= 200 && s.status < 300),
      `baseline: every request succeeds ${JSON.stringify(tally(baseline))}`,
    )
    assert.equal((await readyz(server)).status, 200)

    const outages = [await postgresOutage('stop', pg, server, load), await postgresOutage('kill', pg, server, load)]
    await load.stop()

    // Every request of the whole run: in time, 2xx or a clear 503; never a 500 or a hang.
    assertOnlySuccessOr503(load.samples, 'whole run')
    const reports = outages.map((o) => assertOutageSamples(load, o))
    assertAlive(server, 'after both PostgreSQL outages')
    await assertCleanExit(server, 'PostgreSQL outages')
    process.stdout.write(
      `[faults] ${reports.join('; ')}; max request latency ${fmt(maxLatency(load.samples))} over ${load.samples.length} requests; no restart (pid ${server.pid} throughout)\n`,
    )
  } finally {
    await load.stop()
  }
})

test('Redis outage under load: fail-open keeps serving on local limits, fail-closed 503s, both recover without a restart', {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  if (!requireThrowaway(t, 'PostgreSQL', 'Redis')) return
  const [pg, redis] = await Promise.all([startThrowawayPostgres(t), startThrowawayRedis(t)])
  const dir = await useTempDir(t, 'animal-store-faults-')
  // One key per server, so that each one's Redis hash shows that server's decisions.
  const openKey = await createKeyViaCli(pg.url, { plan: 'enterprise', name: 'open', perMinute: 10_000_000, perDay: 100_000_000 })
  const closedKey = await createKeyViaCli(pg.url, { plan: 'enterprise', name: 'closed', perMinute: 10_000_000, perDay: 100_000_000 })
  const [open, closed] = await Promise.all([
    startServer(t, { dir, db: pg.url, logFile: join(dir, 'open.log'), env: { REDIS_URL: redis.url, LOG_LEVEL: 'warn' } }),
    startServer(t, {
      dir,
      db: pg.url,
      logFile: join(dir, 'closed.log'),
      env: { REDIS_URL: redis.url, REDIS_FAILURE_POLICY: 'closed', LOG_LEVEL: 'warn' },
    }),
  ])
  const openHash = `${REDIS_KEY_PREFIX}{k:${openKey.id}}`
  const load = new Load(
    [
      { name: 'open', server: open, key: openKey.key },
      { name: 'closed', server: closed, key: closedKey.key },
    ],
    LOOPS_PER_SERVER,
  )
  try {
    await waitFor(() => load.samples.length > 20, RECOVERY_MS, 50)
    const baseline = load.samples.slice()
    assert.ok(
      baseline.every((s) => s.status >= 200 && s.status < 300),
      `baseline: every request succeeds ${JSON.stringify(tally(baseline))}`,
    )
    for (const server of [open, closed]) {
      const r = await readyz(server)
      assert.equal(r.status, 200)
      assert.equal(r.body.checks?.rateLimiter?.status, 'up')
    }
    const fallbackBefore = await fallbackTotal(open, 'open')

    // --- Redis down (nothing persisted: its data is gone when it comes back).
    await redis.stop()
    const stopped = performance.now()
    const openDown = await waitForReadiness(open, (r) => r.body.checks?.rateLimiter?.status === 'down', RECOVERY_MS)
    assert.equal(openDown.status, 200, 'fail-open: /readyz stays 200 while Redis is down')
    assert.equal(openDown.body.status, 'degraded', 'fail-open: ready, but degraded')
    assert.equal(openDown.body.checks?.database?.status, 'up')
    const closedDown = await waitForReadiness(closed, (r) => r.status === 503, RECOVERY_MS)
    const noticedAt = performance.now()
    assert.equal(closedDown.body.checks?.rateLimiter?.status, 'down', 'fail-closed: /readyz 503 names the rate limiter')
    assert.equal(closedDown.body.checks?.database?.status, 'up')
    // Requests that were in flight when Redis went away wait out the command timeout (500 ms)
    // before they fall back, and /readyz can notice the outage sooner: wait for the first one.
    let fallbackEarly = fallbackBefore
    await waitFor(
      async () => {
        fallbackEarly = await fallbackTotal(open, 'open')
        return fallbackEarly > fallbackBefore
      },
      RECOVERY_MS,
      50,
    )
    await sleep(OUTAGE_MS)
    const fallbackLate = await fallbackTotal(open, 'open')
    assert.ok(fallbackEarly > fallbackBefore, `fallback counter grows (${fallbackBefore} -> ${fallbackEarly})`)
    assert.ok(fallbackLate > fallbackEarly, `fallback counter keeps growing during the outage (${fallbackEarly} -> ${fallbackLate})`)
    assert.ok((await fallbackTotal(closed, 'closed')) > 0, 'the closed server counts its refusals')
    assert.equal((await readyz(open)).status, 200, 'fail-open: still ready at the end of the outage')
    for (const server of [open, closed]) assertAlive(server, 'during the Redis outage')
    const startIssued = performance.now()

    // --- Redis back, on the same port.
    await redis.start()
    const upAt = performance.now()
    const client = new Redis(redis.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      commandTimeout: 2_000,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    })
    client.on('error', () => {})
    t.after(() => client.disconnect())
    await client.connect()
    // The open server decides in Redis again: its hash (gone with the restart) reappears.
    assert.ok(
      await waitFor(async () => (await client.exists(openHash)) === 1, RECOVERY_MS, 10),
      'the open server writes its decisions to Redis again',
    )
    const openRecoveryMs = performance.now() - upAt
    const closedSuccessSince = (from: number) =>
      load.samples.filter((s) => s.server === 'closed' && s.status >= 200 && s.status < 300 && s.start >= from)
    assert.ok(
      await waitFor(() => closedSuccessSince(upAt).length > 0, RECOVERY_MS, 10),
      'fail-closed: requests succeed again without a restart',
    )
    const closedFirstSuccess = Math.min(...closedSuccessSince(upAt).map((s) => s.end))
    const openUp = await waitForReadiness(open, (r) => r.body.checks?.rateLimiter?.status === 'up', RECOVERY_MS)
    assert.equal(openUp.status, 200)
    const closedUp = await waitForReadiness(closed, (r) => r.status === 200, RECOVERY_MS)
    assert.equal(closedUp.body.checks?.rateLimiter?.status, 'up')
    const readyzRecoveryMs = performance.now() - upAt

    // Decisions come from Redis again: the fallback counter stops while the load goes on...
    await sleep(1_000) // requests that were already deciding locally when Redis came back
    const fallbackAfter = await fallbackTotal(open, 'open')
    const countedBefore = Number(await client.hget(openHash, 'dc'))
    await sleep(1_500)
    assert.equal(await fallbackTotal(open, 'open'), fallbackAfter, 'no more local decisions once Redis is back')
    const countedAfter = Number(await client.hget(openHash, 'dc'))
    assert.ok(countedAfter > countedBefore, `Redis counts the open server's requests (${countedBefore} -> ${countedAfter})`)
    const end = performance.now()
    await load.stop()
    // ...and every request is counted there, one for one. Redis counts a run of admission numbers
    // when it hands the run to an instance (leases, docs/limits.md), so each admission's day number
    // (perDay − r − 1 of its RateLimit header) is one that Redis has counted, ten requests take ten
    // consecutive numbers, and those are Redis' numbers (the fallback's would start near 0).
    const dayNumbers: number[] = []
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${open.url}/v1/pets?limit=1`, {
        headers: bearer(openKey.key),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
      await res.arrayBuffer()
      assert.equal(res.status, 200)
      const dayLeft = /"day";r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]
      assert.ok(dayLeft !== undefined, `a day item in RateLimit: ${res.headers.get('ratelimit')}`)
      dayNumbers.push(100_000_000 - Number(dayLeft) - 1)
    }
    const counted = Number(await client.hget(openHash, 'dc'))
    assert.deepEqual(
      dayNumbers,
      dayNumbers.map((_, i) => dayNumbers[0]! + i),
      '10 requests -> 10 consecutive admission numbers',
    )
    assert.ok(dayNumbers[9]! < counted, `each counted in Redis (numbers ${dayNumbers[0]}..${dayNumbers[9]}, Redis ${counted})`)
    assert.ok(dayNumbers[0]! >= countedAfter - 256, `Redis' numbers, not the fallback's (${dayNumbers[0]}, Redis had ${countedAfter})`)

    // Fail-open: not one request failed, before, during or after the outage.
    const openAll = load.samples.filter((s) => s.server === 'open')
    assertOnlySuccessOr503(openAll, 'fail-open server')
    assert.ok(
      openAll.every((s) => s.status >= 200 && s.status < 300),
      `fail-open: every request succeeded ${JSON.stringify(tally(openAll))}`,
    )
    const openDuring = load.within('open', stopped, startIssued)
    assert.ok(openDuring.length > 10, `fail-open: requests during the outage (${openDuring.length})`)
    // Fail-closed: 503 service_unavailable while down, 2xx before and after.
    const closedAll = load.samples.filter((s) => s.server === 'closed')
    assertOnlySuccessOr503(closedAll, 'fail-closed server')
    const closedDuring = load.within('closed', noticedAt, startIssued)
    assert.ok(closedDuring.length > 10, `fail-closed: requests during the outage (${closedDuring.length})`)
    assert.deepEqual(
      tally(closedDuring),
      { '503 service_unavailable': closedDuring.length },
      'fail-closed: every request while Redis is down: 503',
    )
    const closedAfter = load.within('closed', closedFirstSuccess + 200, end)
    assert.ok(
      closedAfter.length > 5 && closedAfter.every((s) => s.status < 300),
      `fail-closed after recovery: ${JSON.stringify(tally(closedAfter))}`,
    )
    for (const server of [open, closed]) {
      assertAlive(server, 'after the Redis outage')
      await assertCleanExit(server, `Redis outage (${server === open ? 'open' : 'closed'})`)
    }

    process.stdout.write(
      `[faults] Redis outage: fail-open: ${openDuring.length} requests while down, all 2xx, fallback_total ${fallbackBefore} -> ${fallbackLate}, /readyz 200 with the limiter down; ` +
        `fail-closed: ${closedDuring.length} requests while down, all 503 service_unavailable, /readyz 503; ` +
        `recovery from PONG: fail-open deciding in Redis again ${fmt(openRecoveryMs)}, fail-closed first 2xx ${fmt(closedFirstSuccess - upAt)}, ` +
        `both /readyz up ${fmt(readyzRecoveryMs)}; fallback counter flat afterwards (${fallbackAfter}); max request latency ${fmt(maxLatency(load.samples))}; ` +
        `no restart (pids ${open.pid}, ${closed.pid})\n`,
    )
  } finally {
    await load.stop()
  }
})
