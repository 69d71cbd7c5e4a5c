// How latency grows with the catalogue, at a fixed request rate.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from '../../tools/http.mjs'
import { readMemory } from '../../tools/proc.mjs'
import { stop } from '../lib/children.mjs'
import { measured, runPaced } from '../lib/load.mjs'
import { harnessGroups, quiet, round2 } from '../lib/rounds.mjs'
import { LOAD_CPU, SERVER_CPU } from '../lib/scenarios.mjs'
import { createBenchKey, growthQueries, seedSqlite, startCeiling, startService, withRestart } from '../lib/service.mjs'

/** @typedef {import('../lib/rounds.mjs').Bench} Bench */

/**
 * The growth check: a fixed request rate (bench/paced.mjs) on catalogues of growing size, deep pages
 * included, with SQLite's plan of each query.
 * @param {Bench} bench
 */
export async function growthSection(bench, results) {
  const { opts, log, tmp } = bench
  const dbFile = join(tmp, 'growth.db')
  const key = await createBenchKey(dbFile)
  const section = {
    rate: opts.rate,
    seconds: opts.pacedDuration,
    generator: 'bench/paced.mjs (open loop, keep-alive http.Agent, CPU 0)',
    sizes: [],
  }
  results.growth = section
  for (const size of opts.growth) {
    const seed = await seedSqlite(dbFile, size)
    log(`growth: ${seed.rows} pets (inserted ${seed.inserted} directly in ${seed.seconds}s)`)
    const queries = await growthQueries(dbFile, { quick: opts.quick, distinct: opts.distinctPages })
    const service = await startService({
      env: opts.serviceEnv,
      nodeFlags: opts.serviceNodeFlags,
      databaseUrl: dbFile,
      logFile: join(tmp, `service-growth-${size}.log`),
      cpu: SERVER_CPU,
    })
    const groups = harnessGroups({ server: () => [service.pid] })
    const entry = { size: seed.rows, seedSeconds: seed.seconds, queries: [] }
    section.sizes.push(entry)
    try {
      // Once: the same paced load on the ceiling (same response bytes, any page) = the floor this
      // machine and this generator give at that rate, to read the service's latencies against.
      if (!section.floor) section.floor = await growthFloor(bench, { service, key: key.key, queries, size })
      for (const q of queries) {
        const check = await request(service.port, { path: q.paths[0], headers: { authorization: `Bearer ${key.key}` } })
        const items = check.status === 200 ? JSON.parse(check.text).length : 0
        if (check.status !== 200 || items === 0) throw new Error(`growth query ${q.paths[0]} answered ${check.status} with ${items} items`)
        const pathsFile = join(tmp, `paths-${size}-${q.id}.txt`)
        writeFileSync(pathsFile, q.paths.join('\n') + '\n')
        const runs = []
        for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
          const waited = await quiet(bench, groups)
          const m = await withRestart(
            service,
            () =>
              measured({ groups, memoryPid: service.pid, thresholdPct: opts.voidThreshold }, () =>
                runPaced({
                  port: service.port,
                  path: q.paths[0],
                  pathsFile,
                  key: key.key,
                  rate: opts.rate,
                  seconds: opts.pacedDuration,
                  warmup: opts.quick ? 1 : 2,
                  cpu: LOAD_CPU,
                }),
              ),
            2,
            log,
            () =>
              runPaced({
                port: service.port,
                path: q.paths[0],
                pathsFile,
                key: key.key,
                rate: opts.rate,
                seconds: 2,
                warmup: 0,
                cpu: LOAD_CPU,
              }),
          )
          m.serverCpuPct = m.cpu.groupsPct.server
          runs.push({ attempt, quietWait: waited, ...m, void: m.voidReason !== null })
          log(
            `growth ${seed.rows} ${q.id}: ${m.achievedRate}/s p50 ${m.p50Ms} ms p99 ${m.p99Ms} ms (schedule p99 ${m.scheduleP99Ms} ms), ` +
              `server CPU ${m.serverCpuPct}%${m.voidReason ? ` VOID: ${m.voidReason}` : ''}`,
          )
          if (!m.voidReason) break
        }
        const valid = runs.filter((r) => !r.void)
        const best = valid[valid.length - 1]
        entry.queries.push({
          id: q.id,
          path: q.pattern,
          distinctPaths: q.paths.length,
          items,
          plan: q.plan,
          runs,
          valid: best !== undefined,
          p50Ms: best?.p50Ms ?? null,
          p99Ms: best?.p99Ms ?? null,
          serverCpuPct: best?.serverCpuPct ?? null,
          ...(best ? {} : { voidP50Ms: runs[runs.length - 1].p50Ms, voidP99Ms: runs[runs.length - 1].p99Ms }),
          peakRssMb: Math.max(0, ...runs.map((r) => r.memory?.peakRssMb ?? 0)),
        })
      }
      // The service's largest resident set at this size: sampled during the measured runs, and
      // the kernel's own high-water mark over the process's life (start-up and warm-up included).
      entry.peakRssMb = Math.max(0, ...entry.queries.map((q) => q.peakRssMb))
      const hwm = readMemory(service.pid)?.hwmKb
      entry.vmHwmMb = hwm ? Math.round(hwm / 102.4) / 10 : null
      log(`growth ${seed.rows}: peak RSS ${entry.peakRssMb} MB (VmHWM ${entry.vmHwmMb} MB)`)
    } finally {
      await stop(service.child)
    }
  }
  // Largest size against the smallest, per query.
  const first = section.sizes[0]
  const last = section.sizes[section.sizes.length - 1]
  section.ratios =
    first && last && first !== last
      ? first.queries.map((q, i) => ({
          id: q.id,
          from: first.size,
          to: last.size,
          p50: q.p50Ms && last.queries[i]?.p50Ms ? round2(last.queries[i].p50Ms / q.p50Ms) : null,
          p99: q.p99Ms && last.queries[i]?.p99Ms ? round2(last.queries[i].p99Ms / q.p99Ms) : null,
        }))
      : []
}

/**
 * The same paced load on the ceiling, answering each query's bytes: the floor of latency this machine
 * and this generator give at that rate.
 * @param {Bench} bench
 */
async function growthFloor(bench, { service, key, queries, size }) {
  const { opts, log, tmp } = bench
  const captures = []
  for (const q of queries) {
    const r = await request(service.port, { path: q.paths[0], headers: { authorization: `Bearer ${key}` }, redirect: 'manual' })
    captures.push({
      method: 'GET',
      path: q.paths[0],
      status: r.status,
      headers: r.rawHeaders,
      bodyBase64: r.bytes.toString('base64'),
      anyQuery: true,
    })
  }
  const ceiling = await startCeiling(captures, tmp, SERVER_CPU)
  const groups = harnessGroups({ server: () => [service.pid], ceiling: () => [ceiling.pid] })
  const floor = {}
  try {
    for (const q of queries) {
      const pathsFile = join(tmp, `paths-floor-${size}-${q.id}.txt`)
      writeFileSync(pathsFile, q.paths.join('\n') + '\n')
      let last
      for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
        await quiet(bench, groups)
        last = await measured({ groups, thresholdPct: opts.voidThreshold }, () =>
          runPaced({
            port: ceiling.port,
            path: q.paths[0],
            pathsFile,
            key,
            rate: opts.rate,
            seconds: opts.pacedDuration,
            warmup: opts.quick ? 1 : 2,
            cpu: LOAD_CPU,
          }),
        )
        log(
          `growth floor (ceiling) ${q.id}: p50 ${last.p50Ms} ms p99 ${last.p99Ms} ms${last.voidReason ? ` VOID: ${last.voidReason}` : ''}`,
        )
        if (!last.voidReason) break
      }
      floor[q.id] = {
        p50Ms: last.p50Ms,
        p99Ms: last.p99Ms,
        maxMs: last.maxMs,
        void: last.voidReason !== null,
        voidReason: last.voidReason,
        ceilingCpuPct: last.cpu.groupsPct.ceiling,
      }
    }
  } finally {
    await stop(ceiling.child)
  }
  return floor
}
