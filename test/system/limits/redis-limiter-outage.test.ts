/**
 * RedisLimiter through an outage of its Redis and back, without a restart: a throwaway redis-server
 * (own port, no persistence) that the test kills, restarts, or freezes with SIGSTOP. Never the
 * machine's Redis.
 *
 * Timing: the limiter's own timeouts are set here (command timeout 500 ms; ioredis' socket timeout
 * is 2 s, the reconnection backoff is capped at 1 s). The bounds below separate those mechanisms
 * from one another with room for a busy machine (a decision "waits" when it waits for a command
 * timeout; deciding at once takes microseconds), and how long a recovery took is printed, not
 * asserted: a recovery that never comes fails the poll's generous deadline.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { REDIS_TIMEOUTS } from '../../../src/limits/redis/connection.js'
import { FREE, fallbackCount, type RedisHarness, redisLimiter, redisUpGauge, timed, uniqueIdentity } from '../../helpers/redis-limiter.js'
import { requireThrowaway, startThrowawayRedis } from '../helpers/faults.js'

const COMMAND_TIMEOUT_MS = REDIS_TIMEOUTS.commandMs
/** ioredis' socketTimeout: a silent connection is dropped after it. */
const SOCKET_TIMEOUT_MS = REDIS_TIMEOUTS.socketMs
/** The service's bounds (the test harness widens them for a loaded machine): what these tests time. */
const SERVICE_TIMEOUTS = {
  commandTimeoutMs: COMMAND_TIMEOUT_MS,
  connectTimeoutMs: REDIS_TIMEOUTS.connectMs,
  socketTimeoutMs: SOCKET_TIMEOUT_MS,
}
/** A recovery (reconnection backoff capped at 1 s) that has not happened by then never will. */
const RECOVERY_DEADLINE_MS = 15_000

/** Consumes every `everyMs` until `done(decidedByRedis)`; returns the elapsed ms and the slowest decision. */
async function pollUntil(
  h: RedisHarness,
  done: (fromRedis: boolean) => boolean,
  limitMs: number,
  everyMs = 25,
): Promise<{ elapsed: number; slowest: number }> {
  const start = performance.now()
  let slowest = 0
  for (;;) {
    const before = await fallbackCount(h.metrics, 'open')
    const [, ms] = await timed(() => h.limiter.consume(uniqueIdentity(), FREE))
    slowest = Math.max(slowest, ms)
    const fromRedis = (await fallbackCount(h.metrics, 'open')) === before
    if (done(fromRedis)) return { elapsed: performance.now() - start, slowest }
    if (performance.now() - start > limitMs) throw new Error(`condition not reached within ${limitMs} ms`)
    await sleep(everyMs)
  }
}

describe('RedisLimiter: outage and recovery (throwaway redis-server)', () => {
  test('falls back when Redis dies and decides with Redis again once it is back, without a restart', async (t) => {
    if (!requireThrowaway(t, 'Redis')) return
    const server = await startThrowawayRedis(t)
    const h = redisLimiter({ url: server.url, failurePolicy: 'open', ...SERVICE_TIMEOUTS })
    t.after(() => h.limiter.close())

    const id = uniqueIdentity()
    assert.equal((await h.limiter.consume(id, FREE)).allowed, true)
    assert.equal(await fallbackCount(h.metrics, 'open'), 0, 'decided by Redis')
    assert.equal(await redisUpGauge(h.metrics), 1)

    await server.kill()
    const down = await pollUntil(h, (fromRedis) => !fromRedis, RECOVERY_DEADLINE_MS)
    t.diagnostic(
      `outage: first fallback decision ${down.elapsed.toFixed(0)} ms after the kill; slowest decision ${down.slowest.toFixed(1)} ms`,
    )
    // No decision waits for the socket timeout or the reconnection: at most a command timeout, with slack.
    assert.ok(down.slowest < 3 * COMMAND_TIMEOUT_MS, `slowest decision during the outage ${down.slowest.toFixed(0)} ms`)
    await assert.rejects(h.limiter.ping())
    assert.equal(await redisUpGauge(h.metrics), 0)
    // Let the reconnection backoff reach its cap (1 s), as in a real outage of a few seconds.
    await sleep(2600)

    await server.start()
    const up = await pollUntil(h, (fromRedis) => fromRedis, RECOVERY_DEADLINE_MS)
    t.diagnostic(`recovery: decisions from Redis again ${up.elapsed.toFixed(0)} ms after it accepted connections`)
    await h.limiter.ping()
    assert.equal(await redisUpGauge(h.metrics), 1)
    assert.equal(h.log.warns.length, 1, 'one warning for the outage')
    assert.equal(h.log.infos.length, 1, 'one notice for the recovery')
  })

  test('a hung Redis costs at most the command timeout before falling back, and heals when it resumes', async (t) => {
    if (!requireThrowaway(t, 'Redis')) return
    const server = await startThrowawayRedis(t) // its disposal resumes it first
    const h = redisLimiter({ url: server.url, failurePolicy: 'open', ...SERVICE_TIMEOUTS })
    t.after(() => h.limiter.close())
    assert.equal((await h.limiter.consume(uniqueIdentity(), FREE)).allowed, true)

    server.pause()
    const batch = () =>
      Promise.all(Array.from({ length: 20 }, () => timed(() => h.limiter.consume(uniqueIdentity(), FREE)).then(([, ms]) => ms)))
    const waited = (ms: number) => ms >= COMMAND_TIMEOUT_MS / 2
    // Requests already in flight when the server hangs each wait out the command timeout (not the
    // socket timeout: 3 x the command timeout stays below it)...
    const first = await batch()
    t.diagnostic(`hung Redis: requests in flight decided after ${Math.min(...first).toFixed(0)}-${Math.max(...first).toFixed(0)} ms`)
    assert.ok(Math.max(...first) < 3 * COMMAND_TIMEOUT_MS, `slowest ${Math.max(...first).toFixed(0)} ms`)
    assert.equal(await fallbackCount(h.metrics, 'open'), 20)
    // ...then a single probe waits while the others decide at once...
    const second = await batch()
    assert.ok(second.filter(waited).length <= 1, `only the probe waits: ${second.map((ms) => ms.toFixed(0))}`)
    // ...and once the socket timeout drops the dead connection, nobody waits.
    await sleep(SOCKET_TIMEOUT_MS + 500)
    const third = await batch()
    t.diagnostic(`hung Redis: after the socket timeout, slowest decision ${Math.max(...third).toFixed(1)} ms`)
    assert.deepEqual(third.filter(waited), [], 'no decision waits once the dead connection is dropped')

    server.resume()
    const up = await pollUntil(h, (fromRedis) => fromRedis, RECOVERY_DEADLINE_MS)
    t.diagnostic(`hung Redis: decisions from Redis again ${up.elapsed.toFixed(0)} ms after it resumed`)
    assert.equal(h.log.warns.length, 1)
    assert.equal(h.log.infos.length, 1)
  })
})
