// The order flow: place an order, then cancel it or (one in four) complete it, on SQLite with the
// in-memory limiter, with the service's CPU per request. There is no ceiling or peer here: an
// order's answer depends on the one before, so no replayed bytes stand for it.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stop } from '../lib/children.mjs'
import { measured, runOrderFlow } from '../lib/load.mjs'
import { harnessGroups, median, quiet, round2 } from '../lib/rounds.mjs'
import { LOAD_CPU, SERVER_CPU } from '../lib/scenarios.mjs'
import { availableIds, startService } from '../lib/service.mjs'
import { freshCatalogue } from './sqlite.mjs'

/** @typedef {import('../lib/rounds.mjs').Bench} Bench */

/**
 * @param {Bench} bench
 */
export async function ordersSection(bench, results) {
  const { opts, log, tmp } = bench
  // One flow in four sells its animal: 100,000 pets (66,000 for sale) last the rounds of a full run.
  const { dbFile, key } = await freshCatalogue(bench, 'orders', opts.quick ? opts.catalogue : Math.max(opts.catalogue, 100_000))
  const service = await startService({
    env: opts.serviceEnv,
    nodeFlags: opts.serviceNodeFlags,
    databaseUrl: dbFile,
    logFile: join(tmp, 'service-orders.log'),
    cpu: SERVER_CPU,
  })
  const groups = harnessGroups({ server: () => [service.pid] })
  const section = { status: 'ok', backend: 'SQLite + in-memory limiter', connections: opts.orderConnections, rounds: [] }
  results.orders = section
  try {
    for (let round = 0; round < opts.rounds; round++) {
      const idsFile = join(tmp, 'order-ids.txt')
      const ids = await availableIds(dbFile)
      writeFileSync(idsFile, `${ids.join('\n')}\n`)
      let m
      for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
        await quiet(bench, groups)
        m = await measured({ groups, memoryPid: service.pid, thresholdPct: opts.voidThreshold }, () =>
          runOrderFlow({
            port: service.port,
            key,
            idsFile,
            connections: opts.orderConnections,
            seconds: opts.duration,
            warmup: opts.quick ? 1 : 2,
            cpu: LOAD_CPU,
          }),
        )
        if (!m.voidReason || attempt === opts.maxRetries) break
        log(`orders round ${round + 1}: void (${m.voidReason}), again`)
      }
      const serverPct = m.cpu.groupsPct.server ?? 0
      const entry = {
        ...m,
        available: ids.length,
        cpuUsPerRequest: m.requests ? round2(((serverPct / 100) * m.cpu.seconds * 1e6) / m.requests) : null,
        serverCpuPct: serverPct,
      }
      delete entry.cpu
      section.rounds.push({ ...entry, cpuSeconds: m.cpu.seconds })
      log(
        `orders round ${round + 1}: ${m.flowsPerSecond} flows/s = ${m.rps} req/s, p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms, ` +
          `server CPU ${serverPct}% = ${entry.cpuUsPerRequest} µs/req${m.voidReason ? ` (void: ${m.voidReason})` : ''}` +
          (m.socketErrors || Object.keys(m.unexpectedStatus).length
            ? `, unexpected ${JSON.stringify(m.unexpectedStatus)}, socket errors ${m.socketErrors}`
            : ''),
      )
    }
    // A busy machine voids every round of a quick run: its figures are then summarised, marked so.
    const valid = section.rounds.filter((r) => !r.voidReason)
    const basis = valid.length ? valid : section.rounds
    const pick = (f) => median(basis.map(f).filter((x) => x !== null && x !== undefined))
    section.summary = {
      validRounds: valid.length,
      fromVoidRounds: valid.length === 0,
      flowsPerSecond: round2(pick((r) => r.flowsPerSecond)),
      rps: round2(pick((r) => r.rps)),
      p50Ms: round2(pick((r) => r.p50Ms)),
      p99Ms: round2(pick((r) => r.p99Ms)),
      cpuUsPerRequest: round2(pick((r) => r.cpuUsPerRequest)),
      peakRssMb: round2(pick((r) => r.memory?.peakRssMb ?? null)),
      httpErrors: section.rounds.reduce((sum, r) => sum + Object.values(r.unexpectedStatus).reduce((a, b) => a + b, 0), 0),
    }
  } finally {
    await stop(service.child)
  }
}
