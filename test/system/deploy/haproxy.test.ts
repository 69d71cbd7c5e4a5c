/**
 * Three instances behind a real HAProxy running the shipped deploy/haproxy.cfg (throwaway, on free
 * 127.0.0.1 ports: test/system/helpers/proxies.ts), on one PostgreSQL database and a throwaway Redis, with
 * TRUST_PROXY naming the balancer and SHUTDOWN_DRAIN_MS set:
 *
 * - keyless clients at two different source addresses (127.0.0.2 and 127.0.0.3) get separate
 *   per-address windows through the balancer (X-Forwarded-For), exactly 60 each, and a client
 *   cannot pick its window by sending X-Forwarded-For itself;
 * - a rolling restart of all three instances (SIGTERM one, wait for its exit, start it again on
 *   its port, wait until HAProxy has it UP, next) under a steady bounded load through the balancer
 *   loses no request: every answer is 200/201 and no request fails at the client.
 *
 * Counts are asserted; the drain and restart windows are printed.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { join } from 'node:path'
import { test } from 'node:test'
import { Redis } from 'ioredis'
import { addressIdentity } from '../../../src/auth/address-identity.js'
import { limiterKeys } from '../../../src/limits/redis/limiter-keys.js'
import { REDIS_KEY_PREFIX } from '../../../tools/service-env.mjs'
import { requireService } from '../../helpers/services.js'
import { ensureMinuteRoom, useScratchDatabase, waitFor } from '../helpers/cluster.js'
import { requireThrowaway, startThrowawayRedis } from '../helpers/faults.js'
import { bearer, createKeyViaCli, freePort, type ServerProcess, sleep, startServer, useTempDir } from '../helpers/process.js'
import { startThrowawayHaproxy, type ThrowawayHaproxy } from '../helpers/proxies.js'

/** Above the shipped health check's inter 1 s x fall 2, plus a check's own duration. */
const DRAIN_MS = 4_000
const LOAD_LOOPS = 6
/** Each loop pauses this long between requests: a steady load, not a flood. */
const LOOP_PAUSE_MS = 10
const MAX_LOAD_REQUESTS = 40_000

interface Answer {
  status: number
  code?: string
  remaining?: number
  error?: string
}

/** One request through `agent` (or a fresh connection from `localAddress`), reduced to what the test checks. */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; agent?: http.Agent; localAddress?: string } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body)
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        agent: options.agent ?? false,
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
        headers: { ...options.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        timeout: 15_000,
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (s: string) => (text += s))
        res.once('end', () => {
          let code: string | undefined
          try {
            code = (JSON.parse(text) as { code?: string }).code
          } catch {
            // not JSON
          }
          const remaining = res.headers['x-ratelimit-remaining']
          resolve({ status: res.statusCode ?? 0, code, remaining: remaining === undefined ? undefined : Number(remaining) })
        })
        res.once('error', (error) => resolve({ status: 0, error: String(error) }))
      },
    )
    req.once('timeout', () => req.destroy(new Error('timed out')))
    req.once('error', (error) => resolve({ status: 0, error: String(error) }))
    req.end(body)
  })
}

async function waitAllUp(haproxy: ThrowawayHaproxy, names: string[], timeoutMs = 30_000): Promise<void> {
  const up = await waitFor(async () => {
    const states = await haproxy.serverStates()
    return names.every((name) => states.find((s) => s.name === name)?.status === 'UP')
  }, timeoutMs)
  if (!up) throw new Error(`HAProxy did not see ${names.join(', ')} UP: ${JSON.stringify(await haproxy.serverStates())}`)
}

test('three instances behind HAProxy: real client addresses, a rolling restart under load loses nothing', {
  timeout: 170_000,
}, async (t) => {
  if (!requireThrowaway(t, 'HAProxy', 'Redis')) return
  if (!(await requireService(t, 'PostgreSQL'))) return
  const redis = await startThrowawayRedis(t)
  const db = await useScratchDatabase(t, 'as_haproxy_')
  const dir = await useTempDir(t, 'animal-store-haproxy-')
  const ports = [await freePort(), await freePort(), await freePort()]
  const names = ['instance1', 'instance2', 'instance3']
  const start = (i: number) =>
    startServer(t, {
      dir,
      db,
      port: ports[i]!,
      logFile: join(dir, `${names[i]}.log`),
      env: { REDIS_URL: redis.url, TRUST_PROXY: '127.0.0.1', SHUTDOWN_DRAIN_MS: String(DRAIN_MS), BOOTSTRAP_KEY: 'false' },
    })
  const instances: ServerProcess[] = []
  for (let i = 0; i < 3; i++) instances.push(await start(i)) // one by one: the first migrates
  const haproxy = await startThrowawayHaproxy(t, ports.map((p) => `127.0.0.1:${p}`) as [string, string, string])
  await waitAllUp(haproxy, names)
  const { key } = await createKeyViaCli(db, { plan: 'enterprise', name: 'load', perMinute: 1_000_000, perDay: 10_000_000 })

  await t.test('keyless clients are limited by their own address, seen through X-Forwarded-For', async () => {
    await ensureMinuteRoom(20)
    const from = (localAddress: string, headers: Record<string, string> = {}) => send(`${haproxy.url}/v1/pets`, { localAddress, headers })
    const first: Answer[] = []
    for (let i = 0; i < 61; i++) first.push(await from('127.0.0.2'))
    assert.deepEqual(
      first.slice(0, 60).map((a) => a.status),
      Array(60).fill(401),
    )
    assert.deepEqual(
      first.slice(0, 60).map((a) => a.remaining),
      Array.from({ length: 60 }, (_, i) => 59 - i),
      "one window for 127.0.0.2 across the three instances (the Free plan's 60/min)",
    )
    assert.equal(first[60]!.status, 429)
    assert.equal(first[60]!.code, 'rate_limited')
    // Another address has a window of its own, even when it claims to be the first one.
    const other = await from('127.0.0.3', { 'x-forwarded-for': '127.0.0.2' })
    assert.equal(other.status, 401)
    assert.equal(other.remaining, 59, "127.0.0.3's own window, whatever X-Forwarded-For it sends")
    const client = new Redis(redis.url, { lazyConnect: true })
    await client.connect()
    try {
      const keys = (await client.keys(`${REDIS_KEY_PREFIX}{addresses:*}:a:*`)).sort()
      const own = (address: string) => limiterKeys(REDIS_KEY_PREFIX, addressIdentity(address))[0]
      assert.deepEqual(keys, [own('127.0.0.2'), own('127.0.0.3')].sort(), 'no window for the balancer itself')
    } finally {
      client.disconnect()
    }
  })

  await t.test('a rolling restart of all three instances under load: 0 errors at the client', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: LOAD_LOOPS, scheduling: 'fifo' })
    const answers = new Map<string, number>()
    const failures: string[] = []
    let sent = 0
    let running = true
    const loop = async (n: number) => {
      for (let i = 0; running && sent < MAX_LOAD_REQUESTS; i++) {
        sent++
        const create = i % 4 === 0
        const answer = await send(`${haproxy.url}/v1/pets${create ? '' : '?limit=10'}`, {
          agent,
          method: create ? 'POST' : 'GET',
          headers: bearer(key),
          ...(create ? { body: { name: `rolling ${n}-${i}`, categoryId: n } } : {}),
        })
        const label = answer.error === undefined ? String(answer.status) : 'transport error'
        answers.set(label, (answers.get(label) ?? 0) + 1)
        if (answer.status !== 200 && answer.status !== 201) failures.push(`${label} ${answer.code ?? answer.error ?? ''}`)
        await sleep(LOOP_PAUSE_MS)
      }
    }
    const load = Array.from({ length: LOAD_LOOPS }, (_, n) => loop(n))
    await sleep(1_000) // steady before the first restart

    const windows: string[] = []
    for (let i = 0; i < 3; i++) {
      const signalled = performance.now()
      let downAfter: number | undefined
      const watchDown = (async () => {
        while (downAfter === undefined && performance.now() - signalled < 30_000) {
          const state = (await haproxy.serverStates()).find((s) => s.name === names[i])
          if (state?.status.startsWith('DOWN')) downAfter = performance.now() - signalled
          else await sleep(50)
        }
      })()
      const stopped = await instances[i]!.stop('SIGTERM', 30_000)
      assert.equal(stopped.code, 0, `${names[i]} stopped gracefully: ${instances[i]!.stderr()}`)
      await watchDown
      const restarted = performance.now()
      instances[i] = await start(i)
      const healthy = performance.now() - restarted
      await waitAllUp(haproxy, names)
      windows.push(
        `${names[i]}: DOWN in HAProxy ${downAfter === undefined ? 'never seen' : `${downAfter.toFixed(0)} ms`} after SIGTERM, ` +
          `exited after ${stopped.ms.toFixed(0)} ms, restarted healthy in ${healthy.toFixed(0)} ms, ` +
          `UP again ${(performance.now() - signalled).toFixed(0)} ms after SIGTERM`,
      )
      assert.ok(downAfter !== undefined && downAfter < stopped.ms, `${names[i]} was taken out by HAProxy before it exited`)
    }
    await sleep(1_000) // steady after the last one
    running = false
    await Promise.all(load)
    agent.destroy()
    const states = await haproxy.serverStates()
    process.stdout.write(
      `rolling restart (SHUTDOWN_DRAIN_MS=${DRAIN_MS}) under ${LOAD_LOOPS} loops: ${sent} requests, ` +
        `${JSON.stringify(Object.fromEntries(answers))}, errors ${failures.length}; ` +
        `sent per instance ${states.map((s) => `${s.name} ${s.sessions}`).join(', ')}\n  ${windows.join('\n  ')}\n`,
    )
    assert.deepEqual(failures, [], 'no request lost or refused during the rolling restart')
    assert.ok(sent < MAX_LOAD_REQUESTS, 'the load ran for the whole restart')
  })

  for (const s of instances) assert.equal((await s.stop('SIGTERM', 30_000)).code, 0)
})
