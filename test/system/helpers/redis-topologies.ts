/**
 * Throwaway Redis topologies for the failover tests, every process through `startThrowaway`
 * (test/system/helpers/faults.ts): its own temp dir, a free 127.0.0.1 port, nothing persisted, stopped and
 * removed after the test, on exit, or by the watchdog.
 *
 *   startThrowawayRedisCluster(t, { masters: 3, replicasPerMaster: 1 })
 *       redis-server --cluster-enabled yes per node, joined by `redis-cli --cluster create`;
 *       `url` is redis+cluster://… (the masters as seed nodes); `masterOf(key)` is the node that
 *       serves the key's slot now, `waitHealthy()` waits for cluster_state:ok on every live node.
 *   startThrowawaySentinel(t)
 *       a master, one replica and three Sentinels (quorum 2, down-after 1 s) watching `mymaster`;
 *       `url` is redis+sentinel://…/mymaster, `currentMaster()` asks a Sentinel.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { redisPing, startThrowaway, type ThrowawayServer } from './faults.js'
import { waitFor } from './process.js'

const NODE_TIMEOUT_MS = 2_000

/** redis-cli against 127.0.0.1:port; its stdout (throws on failure). */
export function redisCli(port: number, ...args: string[]): string {
  const run = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 30_000 })
  if (run.status !== 0)
    throw new Error(`redis-cli -p ${port} ${args.join(' ')} failed (${run.status ?? run.signal}): ${run.stderr}${run.stdout}`)
  return run.stdout
}

function redisNode(t: TestContext, name: string, extraArgs: (dir: string, port: number) => string[]): Promise<ThrowawayServer> {
  return startThrowaway(
    t,
    name,
    async (dir, port) => ({
      url: `redis://127.0.0.1:${port}`,
      launch: {
        file: 'redis-server',
        args: [
          ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
          ...['--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', ''],
          ...extraArgs(dir, port),
        ],
        stopSignal: 'SIGTERM',
        ready: () => redisPing(port),
      },
    }),
    'animal-store-redis-topology-',
  )
}

// ---------------------------------------------------------------------------------------------
// Redis Cluster.

export interface ThrowawayRedisCluster {
  readonly nodes: ThrowawayServer[]
  /** redis+cluster://127.0.0.1:p1,… (the first masters as seed nodes). */
  readonly url: string
  /** The live node that serves `key`'s slot as a master right now. */
  masterOf(key: string): ThrowawayServer
  /** The live replicas of the master on `port`. */
  replicasOf(port: number): ThrowawayServer[]
  /** Resolves once every running node reports cluster_state:ok with all slots served. */
  waitHealthy(timeoutMs?: number): Promise<void>
}

function clusterStateOk(port: number): boolean {
  try {
    const info = redisCli(port, 'cluster', 'info')
    return /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info)
  } catch {
    return false
  }
}

export async function startThrowawayRedisCluster(
  t: TestContext,
  { masters = 3, replicasPerMaster = 1 }: { masters?: number; replicasPerMaster?: number } = {},
): Promise<ThrowawayRedisCluster> {
  const count = masters * (1 + replicasPerMaster)
  const nodes = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      redisNode(t, `throwaway redis cluster node ${i + 1}`, () => [
        ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
        ...['--cluster-node-timeout', String(NODE_TIMEOUT_MS)],
        // A master without a replica must not stop the whole cluster: the other slots keep serving.
        ...['--cluster-require-full-coverage', 'no'],
      ]),
    ),
  )
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`)
  // redis-cli warns that replicas share their masters' host (all are on 127.0.0.1) and goes on.
  redisCli(nodes[0]!.port, '--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes')
  const live = () => nodes.filter((n) => n.running)
  const cluster: ThrowawayRedisCluster = {
    nodes,
    url: `redis+cluster://${addresses.slice(0, masters).join(',')}`,
    masterOf(key: string) {
      const slot = Number(redisCli(live()[0]!.port, 'cluster', 'keyslot', key).trim())
      for (const node of live()) {
        const lines = redisCli(node.port, 'cluster', 'nodes').split('\n')
        const myself = lines.find((l) => l.includes('myself'))
        if (myself === undefined || !/\bmaster\b/.test(myself)) continue
        const ranges = myself.split(' ').slice(8)
        const serves = ranges.some((range) => {
          const [from, to] = range.split('-').map(Number)
          return slot >= from! && slot <= (to ?? from)!
        })
        if (serves) return node
      }
      throw new Error(`no live master serves slot ${slot} of ${key}`)
    },
    replicasOf(port: number) {
      return live().filter((n) => {
        const info = redisCli(n.port, 'info', 'replication')
        return /role:slave/.test(info) && new RegExp(`master_port:${port}\\b`).test(info)
      })
    },
    async waitHealthy(timeoutMs = 30_000) {
      const ok = await waitFor(() => live().every((n) => clusterStateOk(n.port)), timeoutMs, 100)
      if (!ok) throw new Error(`the cluster did not become healthy within ${timeoutMs} ms`)
    },
  }
  await cluster.waitHealthy()
  // Every replica attached to its master (so a failover has someone to promote).
  const attached = await waitFor(
    () =>
      nodes.every((n) => {
        const info = redisCli(n.port, 'info', 'replication')
        return /role:slave/.test(info) ? /master_link_status:up/.test(info) : true
      }),
    30_000,
    100,
  )
  if (!attached) throw new Error('the cluster replicas did not attach to their masters within 30 s')
  return cluster
}

// ---------------------------------------------------------------------------------------------
// Sentinel.

export const SENTINEL_MASTER = 'mymaster'

export interface ThrowawaySentinel {
  readonly master: ThrowawayServer
  readonly replica: ThrowawayServer
  readonly sentinels: ThrowawayServer[]
  /** redis+sentinel://127.0.0.1:s1,…/mymaster */
  readonly url: string
  /** The master's port as the first answering Sentinel says now. */
  currentMasterPort(): number
}

export async function startThrowawaySentinel(t: TestContext): Promise<ThrowawaySentinel> {
  const master = await redisNode(t, 'throwaway redis master', () => [])
  const replica = await redisNode(t, 'throwaway redis replica', () => ['--replicaof', '127.0.0.1', String(master.port)])
  const linked = await waitFor(() => /master_link_status:up/.test(redisCli(replica.port, 'info', 'replication')), 30_000, 100)
  if (!linked) throw new Error('the replica did not attach to the master within 30 s')
  const sentinels = await Promise.all(
    [1, 2, 3].map((i) =>
      startThrowaway(
        t,
        `throwaway redis sentinel ${i}`,
        async (dir, port) => {
          const file = join(dir, 'sentinel.conf')
          writeFileSync(
            file,
            [
              `port ${port}`,
              'bind 127.0.0.1',
              `dir ${dir}`,
              `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master.port} 2`,
              `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
              `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
              `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
              '',
            ].join('\n'),
          )
          return {
            url: `redis://127.0.0.1:${port}`,
            launch: { file: 'redis-server', args: [file, '--sentinel'], stopSignal: 'SIGTERM', ready: () => redisPing(port) },
          }
        },
        'animal-store-sentinel-',
      ),
    ),
  )
  const currentMasterPort = () => {
    for (const s of sentinels.filter((x) => x.running)) {
      try {
        const [, port] = redisCli(s.port, 'sentinel', 'get-master-addr-by-name', SENTINEL_MASTER).trim().split('\n')
        return Number(port)
      } catch {
        // try the next one
      }
    }
    throw new Error('no Sentinel answered')
  }
  // Each Sentinel knows the replica and the other Sentinels before the test kills anything.
  const known = await waitFor(
    () =>
      sentinels.every((s) => {
        const info = redisCli(s.port, 'sentinel', 'master', SENTINEL_MASTER)
        return /num-slaves\n1\b/.test(info) && /num-other-sentinels\n2\b/.test(info)
      }),
    30_000,
    200,
  )
  if (!known) throw new Error('the Sentinels did not discover the replica and each other within 30 s')
  return {
    master,
    replica,
    sentinels,
    url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${SENTINEL_MASTER}`,
    currentMasterPort,
  }
}
