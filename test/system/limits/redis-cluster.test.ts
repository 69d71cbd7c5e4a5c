/**
 * The limiter on a Redis Cluster (REDIS_URL=redis+cluster://…): a throwaway cluster of 3 masters
 * with a replica each (test/system/helpers/redis-topologies.ts), three service instances on one
 * PostgreSQL database.
 *
 * - Each key's state is one hash-tagged key, `<REDIS_KEY_PREFIX>{k:<id>}`, in the slot of `k:<id>` (a keyless
 *   address's in the slot of its table, `<REDIS_KEY_PREFIX>{addresses:<n>}:a:<address>`), on the master that
 *   serves that slot; the limits are exact across the three instances (200
 *   simultaneous requests of a Free key: exactly 60 pass, 59 rate_limited, 81 key_banned) for
 *   keys on different masters at once.
 * - A master is killed (SIGKILL) under a steady load of rate-limited keys: no request gets a 5xx
 *   or fails, and no key is allowed more in a minute than its quota plus what
 *   REDIS_FAILURE_POLICY=open allows (each of the 3 instances' local fallback: 3 x the quota);
 *   once its replica is promoted the limits are exact again on the failed-over slots (a client
 *   address whose slot moved: exactly 60 through the three instances). The window of fallback
 *   decisions is printed.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { join } from 'node:path'
import { test } from 'node:test'
import { addressIdentity } from '../../../src/auth/address-identity.js'
import { limiterKeys } from '../../../src/limits/redis/limiter-keys.js'
import { REDIS_KEY_PREFIX } from '../../../tools/service-env.mjs'
import { requireService } from '../../helpers/services.js'
import { burst, ensureMinuteRoom, tally, useScratchDatabase, waitFor } from '../helpers/cluster.js'
import { FallbackWatch, fallbackCount, LimitedLoad } from '../helpers/failover-load.js'
import { requireThrowaway } from '../helpers/faults.js'
import { bearer, createKeyViaCli, type ServerProcess, sleep, startServer, useTempDir } from '../helpers/process.js'
import { redisCli, startThrowawayRedisCluster } from '../helpers/redis-topologies.js'

const INSTANCES = 3
const QUOTA = 30

/** A keyless GET /v1/pets from `localAddress`: its status (401 while the address has quota, then 429). */
function keyless(base: string, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/pets`, { localAddress, agent: false, timeout: 10_000 }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
    })
    req.once('timeout', () => req.destroy(new Error('timed out')))
    req.once('error', reject)
    req.end()
  })
}

test('the limiter on a 3-master Redis Cluster: exact limits, and a master failover without a 5xx', { timeout: 170_000 }, async (t) => {
  if (!requireThrowaway(t, 'Redis')) return
  if (!(await requireService(t, 'PostgreSQL'))) return
  const cluster = await startThrowawayRedisCluster(t, { masters: 3, replicasPerMaster: 1 })
  const db = await useScratchDatabase(t, 'as_rcluster_')
  const dir = await useTempDir(t, 'animal-store-rcluster-')
  const instances: ServerProcess[] = []
  for (let i = 0; i < INSTANCES; i++) {
    instances.push(
      await startServer(t, {
        dir,
        db,
        logFile: join(dir, `server-${i}.log`),
        env: { REDIS_URL: cluster.url, REDIS_FAILURE_POLICY: 'open', BOOTSTRAP_KEY: 'false' },
      }),
    )
  }
  const bases = instances.map((s) => s.url)
  for (const base of bases) {
    const ready = (await (await fetch(`${base}/readyz`)).json()) as { checks: { rateLimiter: unknown } }
    assert.deepEqual(ready.checks.rateLimiter, { store: 'redis', status: 'up' })
  }

  await t.test('one slot per identity, and exact limits across 3 instances on every master', async () => {
    // Keys until three of them live on three different masters. A key's master is the slot of its
    // random id, a third of the slots each: 15 tries missed one master in a CI run (odds 3 x (2/3)^15,
    // about 1 in 150); 60 tries miss one about once in 10^10 runs, and ~6 are made on average.
    const keysOnEveryMaster = async (name: string) => {
      const byMaster = new Map<number, { key: string; id: string }>()
      for (let i = 0; i < 60 && byMaster.size < 3; i++) {
        const created = await createKeyViaCli(db, { plan: 'free', name: `${name} ${i}` })
        const port = cluster.masterOf(`${REDIS_KEY_PREFIX}{k:${created.id}}`).port
        if (!byMaster.has(port)) byMaster.set(port, created)
      }
      assert.equal(byMaster.size, 3, 'keys on three different masters')
      return byMaster
    }
    // One key at a time, in waves of 50 simultaneous requests: 600 at once would starve this shared
    // machine past the 500 ms command timeout, and a timed-out decision is (rightly) the fallback's.
    // The claim is exactness when Redis decides: a round in which an instance fell back (a machine
    // busy enough to hold a command past the timeout: a CI run beside other work saw 77 allowed of
    // 60) proves nothing about it, so it is run again with new keys, up to three times.
    const admins = instances.map((s) => s.adminUrl)
    const fallbacks = async () => (await Promise.all(admins.map((a) => fallbackCount(a)))).reduce((a, b) => a + b, 0)
    let exact = await keysOnEveryMaster('cluster')
    for (let round = 1; ; round++) {
      await ensureMinuteRoom(30)
      const before = await fallbacks()
      const results = []
      for (const { key } of exact.values()) {
        const outcomes = []
        for (let wave = 0; wave < 4; wave++) outcomes.push(...(await burst(bases, '/v1/pets', 50, bearer(key))))
        results.push(outcomes)
      }
      const fellBack = (await fallbacks()) - before
      if (fellBack > 0 && round < 3) {
        process.stdout.write(`round ${round}: ${fellBack} decisions fell back (Redis past its command timeout): again with new keys\n`)
        exact = await keysOnEveryMaster(`round ${round + 1}`)
        continue
      }
      assert.equal(fellBack, 0, 'three rounds in a row had decisions made without Redis: the machine is too busy to judge exactness')
      for (const [i, [port, { id }]] of [...exact].entries()) {
        const counts = tally(results[i]!)
        const hashKey = `${REDIS_KEY_PREFIX}{k:${id}}`
        assert.equal(redisCli(port, 'cluster', 'keyslot', hashKey).trim(), redisCli(port, 'cluster', 'keyslot', `k:${id}`).trim())
        assert.equal(redisCli(port, 'exists', hashKey).trim(), '1', `${hashKey} lives on its slot's master ${port}`)
        assert.deepEqual(counts, { '200': 60, '429 rate_limited': 59, '429 key_banned': 81 }, `key on master ${port}`)
      }
      break
    }
    process.stdout.write(
      `exact on every master: 3 Free keys on masters ${[...exact.keys()].join(', ')}, 200 requests each over 3 instances (waves of 50): 60/59/81\n`,
    )
  })

  await t.test('a master killed under load: no 5xx, quotas within the open policy, exact again after the failover', async () => {
    const keys = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        createKeyViaCli(db, { plan: 'enterprise', name: `failover ${i}`, perMinute: QUOTA, perDay: 1_000_000 }),
      ),
    )
    const victim = cluster.masterOf(`${REDIS_KEY_PREFIX}{k:${keys[0]!.id}}`)
    const [replica] = cluster.replicasOf(victim.port)
    assert.ok(replica, `master ${victim.port} has a replica to promote`)
    // Allowed counts are kept per minute window, so a boundary during the load changes nothing.
    await ensureMinuteRoom(20)
    const watch = new FallbackWatch(instances.map((s) => s.adminUrl))
    const load = new LimitedLoad(
      bases,
      keys.map(({ key }) => ({ key, perMinute: QUOTA })),
    )
    let killedAt = 0
    let promotedMs = 0
    try {
      // Killed once every key is exhausted in Redis (and replicated): from then on Redis refuses them
      // all, so what a key gets beyond its quota is the fallbacks' alone, at most one quota per instance.
      assert.ok(await waitFor(() => load.exhausted(), 20_000), 'every key used its quota before the kill')
      await sleep(500)
      killedAt = performance.now()
      await victim.kill()
      // The replica takes over once the others agree the master failed (cluster-node-timeout 2 s).
      const promoted = await waitFor(() => {
        try {
          return cluster.masterOf(`${REDIS_KEY_PREFIX}{k:${keys[0]!.id}}`).port === replica.port
        } catch {
          return false
        }
      }, 30_000)
      promotedMs = performance.now() - killedAt
      assert.ok(promoted, `replica ${replica.port} promoted within 30 s`)
      await cluster.waitHealthy(30_000)
      await sleep(4_000) // past the clients' slot refresh: back on Redis
    } finally {
      await load.stop()
      await watch.stop()
    }
    const worst = load.maxAllowed()
    process.stdout.write(
      `cluster failover (master ${victim.port} killed, replica ${replica.port} promoted after ${promotedMs.toFixed(0)} ms): ` +
        `${load.sent} requests ${JSON.stringify(Object.fromEntries(load.statuses))}, failures ${load.failures.length}; ` +
        `${watch.total} fallback decisions, ${watch.describe(killedAt)}; most allowed to one key in a minute ${worst.allowed} (quota ${QUOTA}, ` +
        `open-policy bound ${QUOTA * (1 + INSTANCES)})\n`,
    )
    assert.deepEqual(load.failures, [], 'no 5xx and no failed request during the failover')
    assert.ok(
      worst.allowed <= QUOTA * (1 + INSTANCES),
      `key ${worst.key} allowed ${worst.allowed} in a minute: more than the quota plus ${INSTANCES} local fallbacks`,
    )

    // Exact again on the promoted master: a client address whose slot it now serves.
    let address: string | undefined
    for (let i = 2; i < 250 && address === undefined; i++) {
      if (cluster.masterOf(limiterKeys(REDIS_KEY_PREFIX, addressIdentity(`127.0.0.${i}`))[0]).port === replica.port)
        address = `127.0.0.${i}`
    }
    assert.ok(address, 'an address on the promoted master')
    await ensureMinuteRoom(10)
    const statuses = await Promise.all(Array.from({ length: 90 }, (_, i) => keyless(bases[i % bases.length]!, address!)))
    const counts: Record<number, number> = {}
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1
    assert.deepEqual(counts, { 401: 60, 429: 30 }, `exactly 60 for ${address} on the promoted master`)
  })

  for (const s of instances) assert.equal((await s.stop('SIGTERM')).code, 0, s.stderr())
})
