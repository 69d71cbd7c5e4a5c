/**
 * Three server processes on one PostgreSQL database and one Redis, as behind a load balancer:
 * the limits are exact across instances, data written through one is read through another,
 * limits and bans survive a kill -9 of an instance, and a revocation reaches every instance.
 * Keys are created, listed and revoked with the CLI against PostgreSQL.
 *
 * Isolation: a scratch database per run; Redis is shared with other tests, so nothing is flushed
 * and every test uses keys of its own (rate-limit state is per key id).
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { burst, ensureMinuteRoom, type Outcome, probe, tally, useScratchDatabase, withPg } from '../helpers/cluster.js'
import {
  bearer,
  createKeyViaCli,
  REVOCATION_DEADLINE_MS,
  ROOT,
  request,
  runCli,
  type ServerOptions,
  type ServerProcess,
  sleep,
  startServer,
  useTempDir,
} from '../helpers/process.js'

const ENTERPRISE_BIG = { plan: 'enterprise', perMinute: 1_000_000, perDay: 10_000_000 } as const

test('three instances on one PostgreSQL and one Redis behave as one service', { timeout: 120_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t, 'animal-store-scale-')
  const db = await useScratchDatabase(t)
  const options = (name: string): ServerOptions => ({
    dir,
    db,
    logFile: join(dir, `server-${name}.log`),
    env: { REDIS_URL, BOOTSTRAP_KEY: 'false' },
  })

  // Started together: the migrations run once, under the advisory lock, while the others wait.
  const started = performance.now()
  let [a, b, c] = (await Promise.all([startServer(t, options('a')), startServer(t, options('b')), startServer(t, options('c'))])) as [
    ServerProcess,
    ServerProcess,
    ServerProcess,
  ]
  process.stdout.write(`3 instances healthy in ${(performance.now() - started).toFixed(0)} ms (ports ${a.port}, ${b.port}, ${c.port})\n`)
  for (const s of [a, b, c]) {
    const ready = await request(`${s.url}/readyz`)
    assert.equal(ready.status, 200, ready.text)
    assert.deepEqual((ready.body as { checks: unknown }).checks, {
      database: { engine: 'postgres', status: 'up' },
      rateLimiter: { store: 'redis', status: 'up' },
    })
  }
  const migrations = await withPg(db, (pgc) => pgc.query('SELECT version FROM schema_migrations ORDER BY version'))
  assert.deepEqual(
    migrations.rows.map((r: { version: string }) => r.version),
    readdirSync(join(ROOT, 'src/storage/postgres/migrations'))
      .filter((f) => f.endsWith('.sql'))
      .sort(),
    'each migration applied exactly once by the three concurrent starts',
  )

  await t.test('(5) the key CLI works against PostgreSQL: create, list, revoke', async () => {
    const free = await createKeyViaCli(db, { plan: 'free', name: 'cli free' })
    assert.match(free.key, /^as_live_[0-9A-Za-z]{38}$/)
    assert.equal(free.perMinute, 60)
    assert.equal(free.perDay, 1000)
    const ent = await createKeyViaCli(db, { plan: 'enterprise', name: 'cli ent', perMinute: 5000, perDay: 2_000_000 })
    assert.equal(ent.perMinute, 5000)

    const list = await runCli(['keys', 'list', '--json'], { db })
    assert.equal(list.code, 0, list.stderr)
    const rows = (JSON.parse(list.stdout) as { data: { id: string; prefix: string; plan: string; revokedAt: string | null }[] }).data
    for (const k of [free, ent]) {
      const row = rows.find((r) => r.id === k.id)
      assert.ok(row, `${k.id} listed`)
      assert.equal(row.prefix, k.key.slice(0, row.prefix.length))
      assert.equal(row.revokedAt, null)
    }
    assert.equal(list.stdout.includes(free.key), false, 'list never prints a key')

    // The key works on every instance the moment it exists (unknown keys are not cached).
    for (const s of [a, b, c]) assert.equal((await request(`${s.url}/v1/pets`, { headers: bearer(ent.key) })).status, 200)

    const revoke = await runCli(['keys', 'revoke', ent.id], { db })
    assert.equal(revoke.code, 0, revoke.stderr)
    const again = await runCli(['keys', 'revoke', ent.id], { db })
    assert.equal(again.code, 0, `revoking twice is idempotent: ${again.stderr}`)
    assert.match(again.stdout, new RegExp(`^Key ${ent.id} was already revoked \\(at \\d{4}-`))
    const after = (JSON.parse((await runCli(['keys', 'list', '--json'], { db })).stdout) as { data: typeof rows }).data
    assert.ok(after.find((r) => r.id === ent.id)?.revokedAt, 'listed as revoked')
    assert.equal(after.find((r) => r.id === free.id)?.revokedAt, null)

    const bad = await runCli(['keys', 'create', '--plan', 'enterprise', '--name', 'x'], { db })
    assert.equal(bad.code, 2, 'enterprise without limits is refused')
  })

  await t.test('(a) 200 simultaneous requests of a Free key over 3 instances: exactly 60 pass', async () => {
    const { key } = await createKeyViaCli(db, { plan: 'free', name: 'burst' })
    await ensureMinuteRoom(15)
    const bases = [a.url, b.url, c.url]
    const began = performance.now()
    const outcomes = await burst(bases, '/v1/pets', 200, bearer(key))
    const ms = performance.now() - began
    const counts = tally(outcomes)
    const perInstance = bases.map((_, i) => outcomes.filter((o) => o.target === i && o.status === 200).length)
    process.stdout.write(
      `burst of 200 over 3 instances in ${ms.toFixed(0)} ms: ${JSON.stringify(counts)}; let through per instance ${perInstance.join('/')}\n`,
    )
    assert.equal(counts['200'], 60, 'exactly the Free per-minute limit passes across the three instances')
    assert.equal(outcomes.filter((o) => o.status === 429).length, 140, 'every other request is 429')
    // Decisions are serialised in Redis: 60 allowed, 59 refused, the 60th refusal starts the ban.
    assert.equal(counts['429 rate_limited'], 59)
    assert.equal(counts['429 key_banned'], 81)
    for (const o of outcomes.filter((x) => x.status === 429)) assert.ok(o.retryAfter !== undefined && o.retryAfter >= 1)
  })

  await t.test('(b) a pet created through one instance is read through the others', async () => {
    const { key } = await createKeyViaCli(db, { plan: 'pro', name: 'data' })
    const created = await request(`${a.url}/v1/pets`, {
      method: 'POST',
      headers: bearer(key),
      body: { name: 'Rex', categoryId: 7, status: 'available' },
    })
    assert.equal(created.status, 201, created.text)
    const pet = created.body as { id: number; name: string; categoryId: number; status: string }
    assert.equal(created.headers.get('location'), `/v1/pets/${pet.id}`)

    const viaB = await request(`${b.url}${created.headers.get('location')}`, { headers: bearer(key) })
    assert.equal(viaB.status, 200, viaB.text)
    assert.deepEqual(viaB.body, pet)

    for (const url of [`${c.url}/v1/pets?limit=100`, `${c.url}/v1/pets?limit=100&status=available`]) {
      const list = await request(url, { headers: bearer(key) })
      assert.equal(list.status, 200, list.text)
      assert.deepEqual(
        (list.body as (typeof pet)[]).filter((p) => p.id === pet.id),
        [pet],
        url,
      )
    }
    const sold = await request(`${b.url}/v1/pets?limit=100&status=sold`, { headers: bearer(key) })
    assert.equal(
      (sold.body as (typeof pet)[]).some((p) => p.id === pet.id),
      false,
    )
  })

  await t.test('(c) limits and bans survive a kill -9 and restart of an instance', async () => {
    // Day window exhausted (and the minute, but the day resets later): limited until the end of the UTC day.
    const limited = await createKeyViaCli(db, { plan: 'enterprise', name: 'limited', perMinute: 10, perDay: 10 })
    // Minute exhausted and 10 more refusals in the same minute (threshold = max(perMinute, 10)): banned.
    const banned = await createKeyViaCli(db, { plan: 'enterprise', name: 'banned', perMinute: 10, perDay: 100_000 })
    await ensureMinuteRoom(10)
    // The day window must not end during this test either (it would lift the day limit).
    const msToMidnight = 86_400_000 - (Date.now() % 86_400_000)
    if (msToMidnight < 30_000) await sleep(msToMidnight + 1_000)

    const onA = async (key: string, n: number): Promise<Outcome[]> => {
      const out: Outcome[] = []
      for (let i = 0; i < n; i++) out.push(await probe(`${a.url}/v1/pets`, bearer(key)))
      return out
    }
    assert.deepEqual(tally(await onA(limited.key, 12)), { '200': 10, '429 rate_limited': 2 })
    assert.deepEqual(tally(await onA(banned.key, 20)), { '200': 10, '429 rate_limited': 9, '429 key_banned': 1 })
    const banBefore = await probe(`${a.url}/v1/pets`, bearer(banned.key))
    assert.equal(banBefore.code, 'key_banned')
    const banSeenAt = performance.now()
    assert.ok(banBefore.retryAfter! > 50 && banBefore.retryAfter! <= 60, `first ban lasts 60 s (Retry-After ${banBefore.retryAfter})`)

    // kill -9 and start again (same database, same Redis; a new port).
    const killedAt = performance.now()
    const status = await a.kill()
    assert.equal(status.signal, 'SIGKILL')
    a = await startServer(t, options('a2'))
    const restartMs = performance.now() - killedAt

    const limitedAfter = await probe(`${a.url}/v1/pets`, bearer(limited.key))
    assert.equal(limitedAfter.status, 429)
    assert.equal(limitedAfter.code, 'rate_limited', 'still limited after the restart')
    const toMidnight = Math.ceil(
      (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000,
    )
    assert.ok(
      Math.abs(limitedAfter.retryAfter! - toMidnight) <= 2,
      `Retry-After ${limitedAfter.retryAfter} is the end of the UTC day (${toMidnight})`,
    )

    const banAfter = await probe(`${a.url}/v1/pets`, bearer(banned.key))
    const elapsed = (performance.now() - banSeenAt) / 1000
    assert.equal(banAfter.status, 429)
    assert.equal(banAfter.code, 'key_banned', 'still banned after the restart')
    assert.ok(
      banAfter.retryAfter! <= banBefore.retryAfter! - Math.floor(elapsed) + 1 &&
        banAfter.retryAfter! >= banBefore.retryAfter! - Math.ceil(elapsed) - 1,
      `Retry-After counts down across the restart: ${banBefore.retryAfter} -> ${banAfter.retryAfter} after ${elapsed.toFixed(1)} s`,
    )
    // And the other instances agree.
    for (const s of [b, c]) {
      assert.equal((await probe(`${s.url}/v1/pets`, bearer(banned.key))).code, 'key_banned')
      assert.equal((await probe(`${s.url}/v1/pets`, bearer(limited.key))).code, 'rate_limited')
    }
    process.stdout.write(
      `restart: instance killed (SIGKILL) and healthy again in ${restartMs.toFixed(0)} ms; ` +
        `day-limited key still 429 rate_limited (Retry-After ${limitedAfter.retryAfter} s); ` +
        `ban Retry-After ${banBefore.retryAfter} s -> ${banAfter.retryAfter} s after ${elapsed.toFixed(1)} s\n`,
    )
  })

  await t.test('(d) a revocation through the CLI reaches every instance', async () => {
    const doomed = await createKeyViaCli(db, { ...ENTERPRISE_BIG, name: 'doomed' })
    const bystander = await createKeyViaCli(db, { ...ENTERPRISE_BIG, name: 'bystander' })
    const servers = [a, b, c]
    // Used once on each instance, so each has it cached (the case invalidation exists for).
    for (const s of servers) assert.equal((await probe(`${s.url}/v1/pets?limit=1`, bearer(doomed.key))).status, 200)

    let stop = false
    const refusedAt: (number | undefined)[] = [undefined, undefined, undefined]
    const pollers = servers.map(async (s, i) => {
      while (!stop) {
        const o = await probe(`${s.url}/v1/pets?limit=1`, bearer(doomed.key))
        if (o.status === 401) {
          refusedAt[i] = Date.now()
          assert.equal(o.code, 'unauthorized')
          return
        }
        assert.equal(o.status, 200, `before the refusal the key works (got ${o.status} ${o.code})`)
        await sleep(5)
      }
    })
    const revoke = await runCli(['keys', 'revoke', doomed.id], { db })
    const cliExitedAt = Date.now()
    assert.equal(revoke.code, 0, revoke.stderr)
    const deadline = setTimeout(() => (stop = true), REVOCATION_DEADLINE_MS)
    await Promise.all(pollers)
    clearTimeout(deadline)
    stop = true

    // revoked_at is taken just before the revoking transaction: delays below are upper bounds.
    const { rows } = await withPg(db, (pgc) => pgc.query('SELECT revoked_at FROM api_keys WHERE id = $1', [doomed.id]))
    const revokedAt = Number(rows[0].revoked_at)
    const delays = refusedAt.map((at) => (at === undefined ? Infinity : at - revokedAt))
    process.stdout.write(
      `revocation delay per instance (from revoked_at): ${delays.map((d) => `${d.toFixed(0)} ms`).join(', ')}; ` +
        `slowest ${Math.max(...delays).toFixed(0)} ms; CLI ran ${revoke.ms.toFixed(0)} ms, exited ${cliExitedAt - revokedAt} ms after revoked_at\n`,
    )
    // README: within 2 s (PostgreSQL NOTIFY, the 1 s poll as a safety net); printed above, bounded generously.
    for (const [i, at] of refusedAt.entries())
      assert.ok(at !== undefined, `instance ${i} still accepted the key ${REVOCATION_DEADLINE_MS} ms after the revocation`)

    await sleep(1_200) // past a polling period: stays refused, and nothing else is affected
    for (const s of servers) {
      assert.equal((await probe(`${s.url}/v1/pets`, bearer(doomed.key))).status, 401)
      assert.equal((await probe(`${s.url}/v1/pets`, bearer(bystander.key))).status, 200)
    }
  })

  for (const s of [a, b, c]) {
    const stopped = await s.stop('SIGTERM')
    assert.equal(stopped.code, 0, `graceful stop of ${s.url}: ${s.stderr()}`)
  }
})
