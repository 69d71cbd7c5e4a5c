// How `serve --workers N` scales on this machine.
import { join } from 'node:path'
import { findPids, readMemory } from '../../tools/proc.mjs'
import { stop } from '../lib/children.mjs'
import { measured, runWrk } from '../lib/load.mjs'
import { harnessGroups, median, quiet, round2, round3 } from '../lib/rounds.mjs'
import { LOAD_CPU, SQLITE_SCENARIOS } from '../lib/scenarios.mjs'
import { childPids, createBenchKey, seedSqlite, startService } from '../lib/service.mjs'

/** @typedef {import('../lib/rounds.mjs').Bench} Bench */

/**
 * `serve --workers N` with the Redis limiter (shared by the workers) on a SQLite file, for each N
 * of --workers: GET list20 under the same wrk load. The workers may run on both CPUs (taskset
 * 0,1) and wrk stays on CPU 0, so with 2 workers on a 2-CPU machine the load generator competes
 * with one of them: the scaling measured is what this machine gives, not the service's alone.
 * @param {Bench} bench
 */
export async function clusterSection(bench, results) {
  const { opts, log, tmp } = bench
  const section = {
    backend: 'SQLite + Redis limiter, serve --workers N (cluster)',
    status: 'not run',
    pinning: 'service (primary and workers) on CPUs 0,1; wrk on CPU 0',
    scenario: 'list20',
    runs: [],
  }
  results.cluster = section
  const dbFile = join(tmp, 'cluster.db')
  const key = await createBenchKey(dbFile)
  await seedSqlite(dbFile, opts.catalogue)
  const sc = SQLITE_SCENARIOS.list20
  for (const workers of opts.workers) {
    let service
    try {
      service = await startService({
        env: opts.serviceEnv,
        nodeFlags: opts.serviceNodeFlags,
        databaseUrl: dbFile,
        redisUrl: opts.redisUrl,
        logFile: join(tmp, `service-cluster-${workers}.log`),
        cpu: '0,1',
        workers,
      })
    } catch (error) {
      section.reason = `serve --workers ${workers} with REDIS_URL=${opts.redisUrl} did not start: ${error.message}`
      log(`cluster: not run: ${section.reason}`)
      return
    }
    const processes = () => [service.pid, ...childPids(service.pid)]
    const groups = harnessGroups({ server: processes, redis: () => findPids((_cmd, comm) => comm === 'redis-server') })
    const load = (seconds) =>
      runWrk({ port: service.port, path: sc.path(), key: key.key, seconds, connections: opts.connections, cpu: LOAD_CPU })
    const run = { workers, rounds: [] }
    section.runs.push(run)
    try {
      log(`cluster: serve --workers ${workers}, ${sc.name}: warm-up ${opts.warmup}s`)
      if (opts.warmup > 0) await load(opts.warmup)
      for (let r = 1; r <= opts.rounds; r++) {
        for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
          const waited = await quiet(bench, groups)
          const m = await measured({ groups, thresholdPct: opts.voidThreshold }, () => load(opts.duration))
          const rssMb = processes().map((pid) => Math.round((readMemory(pid)?.rssKb ?? 0) / 102.4) / 10)
          run.rounds.push({ round: r, attempt, quietWait: waited, ...m, rssMb, void: m.voidReason !== null })
          log(
            `cluster workers=${workers} round ${r}: ${m.rps} rps, p99 ${m.p99Ms} ms, service CPU ${m.cpu.groupsPct.server}%, ` +
              `Redis ${m.cpu.groupsPct.redis}%, harness+wrk ${m.cpu.harnessPct}%${m.voidReason ? ` VOID: ${m.voidReason}` : ''}`,
          )
          if (!m.voidReason) break
        }
      }
    } finally {
      await stop(service.child)
    }
    const valid = run.rounds.filter((x) => !x.void)
    run.summary = {
      validRounds: valid.length,
      rps: round2(median(valid.map((x) => x.rps))),
      p50Ms: round3(median(valid.map((x) => x.p50Ms))),
      p99Ms: round3(median(valid.map((x) => x.p99Ms))),
      serviceCpuPct: round2(median(valid.map((x) => x.cpu.groupsPct.server))),
      redisCpuPct: round2(median(valid.map((x) => x.cpu.groupsPct.redis))),
      harnessCpuPct: round2(median(valid.map((x) => x.cpu.harnessPct))),
      totalBusyPct: round2(median(valid.map((x) => x.cpu.totalBusyPct))),
      peakRssMbPerProcess: Math.max(0, ...run.rounds.flatMap((x) => x.rssMb)),
      httpErrors: run.rounds.reduce((n, x) => n + x.errorStatus + x.socketErrors, 0),
    }
  }
  const one = section.runs.find((x) => x.workers === 1)?.summary.rps
  for (const x of section.runs) x.summary.vsOneWorker = one && x.summary.rps ? round2(x.summary.rps / one) : null
  section.status = 'ok'
}
