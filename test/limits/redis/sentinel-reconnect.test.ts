/**
 * A failover announced while the limiter's client is asking the Sentinels for the master.
 *
 * ioredis' failover detector (its subscription to the Sentinels' +switch-master) calls the
 * connector's disconnect(); when that lands while a reconnection is waiting for a Sentinel's answer,
 * the connection attempt rejects and ioredis ends the client for good (status "end", no retry). A CI
 * run saw three instances stay down 30 s after a 2 s failover (test/system/limits/redis-sentinel.test.ts);
 * this reproduces that moment with scripted servers (test/helpers/fake-redis.ts), since real
 * Sentinels' timing cannot be steered.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { type FakeRedis, fakeMaster, fakeSentinel } from '../../helpers/fake-redis.js'
import { redisLimiter } from '../../helpers/redis-limiter.js'
import { waitFor } from '../../helpers/wait.js'

test('a failover announced while the limiter asks the Sentinels for the master does not end its client', async (t) => {
  const servers: FakeRedis[] = []
  t.after(() => Promise.all(servers.map((s) => s.close())))
  const oldMaster = await fakeMaster()
  const newMaster = await fakeMaster()
  const sentinel = await fakeSentinel(oldMaster.port)
  servers.push(oldMaster, newMaster, sentinel)

  const { limiter, log } = redisLimiter({
    url: `redis+sentinel://127.0.0.1:${sentinel.port}/mymaster`,
    commandTimeoutMs: 1_000,
    firstAttemptMs: 5_000,
    reconnectMaxMs: 200,
  })
  t.after(() => limiter.close())
  assert.equal(await limiter.firstConnection(), true, 'the limiter found the master through the Sentinel')
  await limiter.ping()
  // The failover detector subscribes once the master's socket is connected.
  assert.ok(await waitFor(() => sentinel.received.some(([name]) => name === 'SUBSCRIBE'), 5_000), 'the client subscribed to +switch-master')

  // The next question for the master is held back; while it is, the Sentinel announces the switch.
  let release!: () => void
  sentinel.holdMasterQuery = new Promise<void>((resolve) => {
    release = resolve
  })
  let asked = false
  sentinel.onMasterQuery = () => {
    if (asked) return
    asked = true
    sentinel.masterPort = newMaster.port
    sentinel.announceSwitch('mymaster', oldMaster.port, newMaster.port)
    // The answer comes after the announcement has been read by the client.
    setTimeout(() => {
      sentinel.holdMasterQuery = undefined
      release()
    }, 100)
  }
  for (const socket of oldMaster.sockets) socket.destroy() // the master dies
  assert.ok(await waitFor(() => asked, 5_000), 'the client asked the Sentinel for the master again')

  const reachesNewMaster = await waitFor(
    async () => {
      try {
        await limiter.ping()
        return newMaster.sockets.size > 0
      } catch {
        return false
      }
    },
    10_000,
    100,
  )
  assert.ok(reachesNewMaster, `the limiter reached the new master; its log: ${JSON.stringify([...log.warns, ...log.errors])}`)
  await sleep(50)
  assert.ok(
    newMaster.received.some(([name]) => name === 'PING'),
    'the new master answered the ping',
  )
})
