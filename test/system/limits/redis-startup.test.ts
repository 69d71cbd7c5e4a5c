/**
 * Redis at start (createLimiter): an unreachable REDIS_URL is a loud, explicit state — one error
 * line naming the URL and what the failure policy does, `/readyz` degraded (open) or 503 (closed)
 * — and an outage is logged once, and its end once, whatever the policy. Only closed ports and
 * throwaway redis-servers on 127.0.0.1 are used: the shared Redis is never touched.
 */
import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { loadConfig } from '../../../src/config/config.js'
import { createLimiter } from '../../../src/limits/index.js'
import { Metrics } from '../../../src/ops/metrics.js'
import { systemClock } from '../../../src/shared/clock.js'
import { LimiterUnavailableError } from '../../../src/shared/outages.js'
import { buildTestApp } from '../../helpers/app.js'
import { requireThrowaway, startThrowawayRedis } from '../helpers/faults.js'
import { freePort } from '../helpers/process.js'

const FREE = { perMinute: 60, perDay: 1000 }

class RecordingLog {
  readonly lines: Array<{ level: string; msg: string; text: string }> = []
  private record(level: string, args: unknown[]) {
    const msg = String(args.find((a) => typeof a === 'string') ?? '')
    this.lines.push({ level, msg, text: JSON.stringify(args) })
  }
  error = (...args: unknown[]) => this.record('error', args)
  warn = (...args: unknown[]) => this.record('warn', args)
  info = (...args: unknown[]) => this.record('info', args)
  debug = () => {}
  trace = () => {}
  fatal = (...args: unknown[]) => this.record('fatal', args)
  child = () => this as unknown as FastifyBaseLogger
  at = (level: string) => this.lines.filter((l) => l.level === level)
}

async function limiterAt(t: TestContext, url: string, policy: 'open' | 'closed') {
  const config = loadConfig({ REDIS_URL: url, REDIS_FAILURE_POLICY: policy, BOOTSTRAP_KEY: 'false' })
  const log = new RecordingLog()
  const started = performance.now()
  const limiter = await createLimiter(config, systemClock, new Metrics({ defaultMetrics: false }), log as unknown as FastifyBaseLogger)
  const startMs = performance.now() - started
  t.after(() => limiter.close())
  return { limiter, log, startMs }
}

for (const policy of ['open', 'closed'] as const) {
  test(`REDIS_FAILURE_POLICY=${policy}: an unreachable Redis at start is one error line naming the URL; readyz shows it`, {
    timeout: 30_000,
  }, async (t) => {
    const port = await freePort() // free a moment ago: nothing listens there
    // The start is not held up: createLimiter resolves once the first attempt has failed (the
    // test's timeout, not a stopwatch, bounds it), and that failure has been logged by then.
    const { limiter, log, startMs } = await limiterAt(t, `redis://:s3cret@127.0.0.1:${port}`, policy)
    t.diagnostic(`the limiter was ready ${startMs.toFixed(0)} ms after the start`)

    const errors = log.at('error')
    assert.equal(errors.length, 1, `one error line at start: ${JSON.stringify(log.lines)}`)
    assert.ok(errors[0]!.msg.includes(`Redis unreachable at redis://:***@127.0.0.1:${port}`), errors[0]!.msg)
    assert.ok(errors[0]!.msg.includes(`REDIS_FAILURE_POLICY=${policy}`), errors[0]!.msg)
    assert.match(errors[0]!.msg, policy === 'open' ? /per instance/ : /answering 503/)
    assert.ok(!log.lines.some((l) => l.text.includes('s3cret')), 'the password is never logged')

    // Requests during the outage decide per policy and log nothing more.
    for (let i = 0; i < 20; i++) {
      if (policy === 'open') assert.equal((await limiter.consume(`k:${i}`, FREE)).allowed, true)
      else await assert.rejects(limiter.consume(`k:${i}`, FREE), LimiterUnavailableError)
    }
    assert.equal(log.lines.length, 1, `still one line after 20 requests: ${JSON.stringify(log.lines)}`)

    // Closed after the test, which closes the limiter too (again: closing is idempotent).
    const app = await buildTestApp(t, { limiter, env: { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_FAILURE_POLICY: policy } })
    const ready = await app.app.inject({ url: '/readyz' })
    assert.equal(ready.statusCode, policy === 'open' ? 200 : 503, ready.body)
    assert.equal(ready.json().status, policy === 'open' ? 'degraded' : 'unavailable')
    assert.deepEqual(ready.json().checks.rateLimiter, { store: 'redis', status: 'down' })
  })
}

// ---------- recovery, on a throwaway redis-server ----------

test('REDIS_FAILURE_POLICY=closed: Redis down at start, then up: one error line, one recovery line, requests served', async (t) => {
  if (!requireThrowaway(t, 'Redis')) return
  const server = await startThrowawayRedis(t)
  await server.stop() // down when the limiter starts
  const port = server.port
  const { limiter, log } = await limiterAt(t, `redis://127.0.0.1:${port}`, 'closed')
  await assert.rejects(limiter.consume('k:before', FREE), LimiterUnavailableError)

  await server.start()
  const deadline = Date.now() + 10_000
  let decided = false
  while (!decided && Date.now() < deadline) {
    decided = await limiter.consume('k:after', FREE).then(
      () => true,
      () => false,
    )
    if (!decided) await sleep(50)
  }
  assert.ok(decided, 'requests are decided by Redis once it answers, without a restart')
  await limiter.ping()
  assert.deepEqual(
    log.lines.map((l) => l.level),
    ['error', 'info'],
    `one line for the outage, one for its end: ${JSON.stringify(log.lines)}`,
  )
  assert.match(log.at('info')[0]!.msg, new RegExp(`Redis at redis://127.0.0.1:${port} answers again`))
})
