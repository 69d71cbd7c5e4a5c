/**
 * Customers over three server processes on one PostgreSQL database and one Redis (issue 31): all
 * keys of a customer share one quota, exactly, whichever instance and key a request reaches (40 +
 * 20 answered, the 61st refused from either key; 150 simultaneous requests of two keys: exactly
 * 60 pass), GET /v1/rate_limit shows the shared windows from either key on any instance without
 * counting, another customer is not affected, and a customer's plan change reaches every instance.
 * Customers and keys are made with the CLI against PostgreSQL.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { REDIS_URL, requireService } from '../../helpers/services.js'
import { burst, ensureMinuteRoom, probe, tally, useScratchDatabase } from '../helpers/cluster.js'
import { bearer, request, runCli, type ServerOptions, sleep, startServer, useTempDir } from '../helpers/process.js'

test('the keys of a customer share one quota across three instances on PostgreSQL + Redis', { timeout: 120_000 }, async (t) => {
  if (!(await requireService(t, 'PostgreSQL'))) return
  if (!(await requireService(t, 'Redis'))) return
  const dir = await useTempDir(t, 'animal-store-customers-')
  const db = await useScratchDatabase(t)
  const options = (name: string): ServerOptions => ({
    dir,
    db,
    logFile: join(dir, `server-${name}.log`),
    env: { REDIS_URL, BOOTSTRAP_KEY: 'false' },
  })
  const servers = await Promise.all([startServer(t, options('a')), startServer(t, options('b')), startServer(t, options('c'))])
  const bases = servers.map((s) => s.url)

  const cli = async (args: string[]) => {
    const run = await runCli([...args, '--json'], { db })
    assert.equal(run.code, 0, run.stderr)
    return JSON.parse(run.stdout)
  }
  const customer = async (name: string) => (await cli(['customers', 'create', '--name', name, '--plan', 'free'])).id as string
  const key = async (customerId: string, name: string) =>
    (await cli(['keys', 'create', '--customer', customerId, '--name', name])).key as string

  const free = await customer('Free Co')
  const [k1, k2] = [await key(free, 'one'), await key(free, 'two')]
  const other = await customer('Other Co')
  const k3 = await key(other, 'three')
  const busy = await customer('Busy Co')
  const [k4, k5] = [await key(busy, 'four'), await key(busy, 'five')]

  await t.test('40 + 20 requests of two keys over three instances are answered, the 61st is 429 from either key', async () => {
    await ensureMinuteRoom(20)
    for (let i = 0; i < 40; i++) assert.equal((await probe(`${bases[i % 3]}/v1/pets`, bearer(k1))).status, 200, `request ${i + 1}`)
    for (let i = 0; i < 20; i++) assert.equal((await probe(`${bases[i % 3]}/v1/pets`, bearer(k2))).status, 200, `request ${41 + i}`)
    for (const [k, base] of [
      [k1, bases[0]],
      [k2, bases[1]],
      [k1, bases[2]],
    ] as const) {
      const refused = await probe(`${base}/v1/pets`, bearer(k))
      assert.equal(refused.status, 429)
      assert.equal(refused.code, 'rate_limited')
    }
    // The customer's spent quota, read through either key on any instance: answered, uncounted.
    for (const [k, base] of [
      [k2, bases[0]],
      [k1, bases[1]],
    ] as const) {
      const read = await request(`${base}/v1/rate_limit`, { headers: bearer(k) })
      assert.equal(read.status, 200, read.text)
      assert.deepEqual(
        (read.body as { windows: Array<{ used: number; remaining: number }> }).windows.map(({ used, remaining }) => [used, remaining]),
        [
          [60, 0],
          [60, 940],
        ],
      )
    }
    // Another customer's key: its own quota, untouched; its rate_limit reads on three instances count nothing.
    const others = await request(`${bases[2]}/v1/pets`, { headers: bearer(k3) })
    assert.equal(others.status, 200)
    assert.equal(others.headers.get('x-ratelimit-remaining'), '59')
    for (const base of bases) assert.equal((await request(`${base}/v1/rate_limit`, { headers: bearer(k3) })).status, 200)
    const next = await request(`${bases[0]}/v1/pets`, { headers: bearer(k3) })
    assert.equal(next.headers.get('x-ratelimit-remaining'), '58')
  })

  await t.test('150 simultaneous requests of two keys of a Free customer over three instances: exactly 60 pass', async () => {
    await ensureMinuteRoom(15)
    const outcomes = (await Promise.all([burst(bases, '/v1/pets', 75, bearer(k4)), burst(bases, '/v1/pets', 75, bearer(k5))])).flat()
    const counts = tally(outcomes)
    process.stdout.write(`two keys of one customer, 150 requests over 3 instances: ${JSON.stringify(counts)}\n`)
    assert.equal(counts['200'], 60)
    assert.equal(outcomes.filter((o) => o.status === 429).length, 90)
    // One ban too: the 60th refusal, whichever key sent it, bans the customer (both keys).
    assert.equal(counts['429 rate_limited'], 59)
    assert.equal(counts['429 key_banned'], 31)
  })

  await t.test("a customer's plan change reaches every instance within the key refresh", async () => {
    await cli(['customers', 'update', other, '--plan', 'pro'])
    const deadline = performance.now() + 5_000
    for (const base of bases) {
      for (;;) {
        const res = await request(`${base}/v1/pets`, { headers: bearer(k3) })
        if (res.headers.get('x-ratelimit-limit') === '300') break
        assert.ok(performance.now() < deadline, `instance ${base} still shows limit ${res.headers.get('x-ratelimit-limit')}`)
        await sleep(100)
      }
    }
  })
})
