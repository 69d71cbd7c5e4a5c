// What DURABILITY=power costs creates.
import { join } from 'node:path'
import { stop } from '../lib/children.mjs'
import { measured, runFsyncBaseline, runWrk } from '../lib/load.mjs'
import { harnessGroups, median, quiet, round2, round3 } from '../lib/rounds.mjs'
import { LOAD_CPU, SERVER_CPU, SQLITE_SCENARIOS } from '../lib/scenarios.mjs'
import { createBenchKey, seedSqlite, startService, withRestart } from '../lib/service.mjs'

/** @typedef {import('../lib/rounds.mjs').Bench} Bench */

/**
 * DURABILITY=power (an fsync per commit): creates with many connections and with one, against a bare
 * fsync'd commit loop on the same disk.
 * @param {Bench} bench
 */
export async function durabilitySection(bench, results) {
  const { opts, log, tmp } = bench
  const dbFile = join(tmp, 'durable.db')
  const key = await createBenchKey(dbFile)
  await seedSqlite(dbFile, 1000)
  const service = await startService({
    env: opts.serviceEnv,
    nodeFlags: opts.serviceNodeFlags,
    databaseUrl: dbFile,
    durability: 'power',
    logFile: join(tmp, 'service-power.log'),
    cpu: SERVER_CPU,
  })
  const groups = harnessGroups({ server: () => [service.pid] })
  const sc = SQLITE_SCENARIOS.post
  const section = { durability: 'power (synchronous=FULL: fsync per commit; concurrent inserts share one commit)', rounds: [] }
  results.durability = section
  const post = (connections, seconds) =>
    runWrk({ port: service.port, path: sc.path(), method: 'POST', body: sc.body, key: key.key, seconds, connections, cpu: LOAD_CPU })
  try {
    log(`durability: DURABILITY=power, warm-up ${opts.warmup}s`)
    if (opts.warmup > 0) await post(opts.connections, opts.warmup)
    for (let r = 1; r <= opts.rounds; r++) {
      for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
        const waited = await quiet(bench, groups)
        const m = { groups, thresholdPct: opts.voidThreshold }
        const { grouped, single } = await withRestart(
          service,
          async () => ({
            grouped: await measured({ ...m, memoryPid: service.pid }, () => post(opts.connections, opts.duration)),
            single: await measured(m, () => post(1, opts.duration)),
          }),
          2,
          log,
          async () => opts.warmup > 0 && (await post(opts.connections, opts.warmup)),
        )
        const baseline = await measured(m, () =>
          runFsyncBaseline({ file: join(tmp, 'fsync-baseline.db'), seconds: Math.max(2, Math.round(opts.duration / 2)), cpu: SERVER_CPU }),
        )
        const voidReason = grouped.voidReason || single.voidReason || baseline.voidReason
        section.rounds.push({
          round: r,
          attempt,
          quietWait: waited,
          grouped,
          singleConnection: single,
          fsyncBaseline: baseline,
          void: !!voidReason,
          voidReason,
        })
        log(
          `durability round ${r}: power POST c=${opts.connections} ${grouped.rps} rps (${grouped.errorStatus} errors), ` +
            `c=1 ${single.rps} rps, single-row fsync'd commits ${baseline.rps}/s${voidReason ? ` VOID: ${voidReason}` : ''}`,
        )
        if (!voidReason) break
      }
    }
  } finally {
    await stop(service.child)
  }
  const valid = section.rounds.filter((r) => !r.void)
  const grouped = median(valid.map((r) => r.grouped.rps))
  const single = median(valid.map((r) => r.singleConnection.rps))
  const baseline = median(valid.map((r) => r.fsyncBaseline.rps))
  const processPost = results.sqlite?.scenarios?.find((s) => s.id === 'post')?.summary.rps ?? null
  section.summary = {
    validRounds: valid.length,
    powerGroupedRps: round2(grouped),
    powerGroupedP99Ms: round3(median(valid.map((r) => r.grouped.p99Ms))),
    powerSingleConnectionRps: round2(single),
    fsyncPerCommitPerSecond: round2(baseline),
    fsyncCommitP50Ms: round3(median(valid.map((r) => r.fsyncBaseline.p50Ms))),
    groupedVsFsyncPerRequest: grouped && baseline ? round2(grouped / baseline) : null,
    groupedVsSingleConnection: grouped && single ? round2(grouped / single) : null,
    processDurabilityPostRps: processPost,
    powerVsProcess: grouped && processPost ? round3(grouped / processPost) : null,
    httpErrors: valid.reduce((n, r) => n + r.grouped.errorStatus + r.grouped.socketErrors + r.singleConnection.errorStatus, 0),
    peakRssMb: Math.max(0, ...section.rounds.map((r) => r.grouped.memory?.peakRssMb ?? 0)),
  }
}
