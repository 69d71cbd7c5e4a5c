// One scenario measured: a warm-up, then rounds of the ceiling, the peer and the service under the
// same wrk load, each round void when another process took the CPU, and the rounds summarised.
import { kernelThreads } from '../../tools/proc.mjs'
import { captureAndStartCeiling, peerOrNothing } from './captures.mjs'
import { stop } from './children.mjs'
import { measured, runWrk, waitQuiet } from './load.mjs'
import { LOAD_CPU, PEER_SCENARIOS, SQLITE_SCENARIOS } from './scenarios.mjs'
import { withRestart } from './service.mjs'

/** @typedef {import('./options.mjs').Options} Options */
/**
 * The run's context, handed to every section: its options, its log and its temp dir.
 * @typedef {{ opts: Options, log: (message: string) => void, tmp: string }} Bench
 */

/** @param {number[]} xs */
export const median = (xs) => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
export const round2 = (x) => (x === null || x === undefined ? null : Math.round(x * 100) / 100)
export const round3 = (x) => (x === null || x === undefined ? null : Math.round(x * 1000) / 1000)

// Processes that belong to the benchmark during a window, beyond this process and its reaped children:
// the kernel threads, which do the kernel's deferred share of our own load (see proc.mjs).
export function harnessGroups(extra = {}) {
  return { kernel: kernelThreads, ...extra }
}

/**
 * Waits for a quiet machine before a round (at most --quiet-wait seconds); resolves with how long it waited.
 * @param {Bench} bench
 */
export async function quiet(bench, groups) {
  const { opts, log } = bench
  return waitQuiet({
    groups,
    thresholdPct: opts.voidThreshold,
    windowMs: opts.quick ? 500 : 1000,
    maxWaitMs: opts.quietWait * 1000,
    onWait: (pct, s) =>
      log(`waiting for a quiet machine (other processes use ${pct}% of a core; ${s}s so far, at most ${opts.quietWait}s)`),
  })
}

/** CPU time of the processes of `labels` in a measured run, per request, in µs (null without requests). */
function cpuUsPerRequest(m, ...labels) {
  if (!m.requests) return null
  const pct = labels.reduce((sum, label) => sum + (m.cpu.groupsPct[label] ?? 0), 0)
  return round2(((pct / 100) * m.cpu.seconds * 1e6) / m.requests)
}

/** Throws if a peer is gone: its rounds would only count socket errors. */
export function assertPeerAlive(peer) {
  if (peer.child.exitCode !== null || peer.child.signalCode !== null) {
    const last = (peer.child.err || peer.child.out).trim().split('\n').slice(-5).join(' | ')
    throw new Error(`the ${peer.kind} peer exited (${peer.child.signalCode ?? `code ${peer.child.exitCode}`}): ${last || 'no output'}`)
  }
}

/**
 * Warm-up, then `--rounds` rounds of ceiling, peer (when given) and service — one after the other
 * under the same wrk settings, so the ratios are paired per round — void rounds rerun together.
 */
export async function runScenario(bench, { id, sc, backend, ctx, service, ceiling, peer, key, extraGroups = {} }) {
  const { opts, log } = bench
  const path = sc.path(ctx)
  const groups = harnessGroups({
    server: () => [service.pid],
    ceiling: () => [ceiling.pid],
    ...(peer ? { peer: () => [peer.pid] } : {}),
    ...extraGroups,
  })
  // PostgreSQL and Redis: what each side costs them per request.
  const backing = Object.keys(extraGroups)
  const load = (port, seconds) =>
    runWrk({ port, path, method: sc.method, body: sc.body, key, seconds, connections: opts.connections, cpu: LOAD_CPU })
  log(`${backend} ${sc.name}: warm-up ${opts.warmup}s per server`)
  if (opts.warmup > 0) {
    await load(ceiling.port, opts.warmup)
    if (peer) await load(peer.port, opts.warmup)
    await load(service.port, opts.warmup)
  }
  const rounds = []
  for (let r = 1; r <= opts.rounds; r++) {
    for (let attempt = 0; attempt <= opts.maxRetries; attempt++) {
      const waited = await quiet(bench, groups)
      const { c, p, s } = await withRestart(
        service,
        async () => {
          const c = await measured({ groups, thresholdPct: opts.voidThreshold }, () => load(ceiling.port, opts.duration))
          const runPeer = () =>
            measured({ groups, memoryPid: peer.pid, thresholdPct: opts.voidThreshold }, () => load(peer.port, opts.duration))
          const runService = () =>
            measured({ groups, memoryPid: service.pid, thresholdPct: opts.voidThreshold }, () => load(service.port, opts.duration))
          // Peer and service swap places every other round, so neither always follows the other
          // (a POST round leaves the table larger and PostgreSQL with work for the next one).
          if (!peer) return { c, p: null, s: await runService() }
          if (r % 2 === 1) {
            const p = await runPeer()
            return { c, p, s: await runService() }
          }
          const s = await runService()
          return { c, p: await runPeer(), s }
        },
        2,
        log,
        async () => opts.warmup > 0 && (await load(service.port, opts.warmup)),
      )
      if (peer) assertPeerAlive(peer)
      s.serverCpuPct = s.cpu.groupsPct.server
      s.cpuUsPerRequest = cpuUsPerRequest(s, 'server')
      c.serverCpuPct = c.cpu.groupsPct.ceiling
      c.cpuUsPerRequest = cpuUsPerRequest(c, 'ceiling')
      if (backing.length) s.backingCpuUsPerRequest = cpuUsPerRequest(s, ...backing)
      if (p) {
        p.serverCpuPct = p.cpu.groupsPct.peer
        p.cpuUsPerRequest = cpuUsPerRequest(p, 'peer')
        if (backing.length) p.backingCpuUsPerRequest = cpuUsPerRequest(p, ...backing)
      }
      const voidReason = c.voidReason
        ? `ceiling run: ${c.voidReason}`
        : p?.voidReason
          ? `peer run: ${p.voidReason}`
          : s.voidReason
            ? `service run: ${s.voidReason}`
            : null
      const entry = {
        round: r,
        attempt,
        quietWait: waited,
        ceiling: c,
        ...(p ? { peer: p, order: r % 2 === 1 ? 'ceiling, peer, service' : 'ceiling, service, peer' } : {}),
        service: s,
        ratio: round3(s.rps / c.rps),
        ...(p ? { peerRatio: round3(s.rps / p.rps) } : {}),
        void: voidReason !== null,
        voidReason,
      }
      rounds.push(entry)
      log(
        `${backend} ${id} round ${r}${attempt ? ` (rerun ${attempt})` : ''}: ceiling ${c.rps} rps, ` +
          (p ? `${peer.kind} peer ${p.rps} rps (${p.cpuUsPerRequest} µs CPU/req), ` : '') +
          `service ${s.rps} rps (ratio ${entry.ratio}${p ? `, to peer ${entry.peerRatio}` : ''}, p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, ` +
          `server CPU ${s.serverCpuPct}% = ${s.cpuUsPerRequest} µs/req, RSS ${s.memory.peakRssMb} MB)` +
          (voidReason ? ` VOID: ${voidReason}` : ''),
      )
      if (!voidReason) break
    }
  }
  return {
    id,
    name: sc.name,
    backend,
    method: sc.method,
    path,
    connections: opts.connections,
    seconds: opts.duration,
    ...(peer ? { peer: peer.kind } : {}),
    rounds,
    summary: summarise(rounds, sc),
  }
}

/**
 * The scenarios `ids` of a section: the service's answers captured for the ceiling, the section's
 * peer (`peerKind`) started and checked on those it answers, then each scenario's rounds, recorded
 * in `section.scenarios`; the ceiling and the peer are stopped at the end.
 * @param {Bench} bench
 */
export async function runScenarios(bench, section, { service, key, ids, ctx, backend, peerKind, databaseUrl, extraGroups = {} }) {
  const { opts } = bench
  const { ceiling, wire, captured, captures } = await captureAndStartCeiling(bench, { service, key, ids, ctx })
  let peer
  try {
    const peerIds = opts.peers ? ids.filter((id) => PEER_SCENARIOS.includes(id)) : []
    if (peerIds.length) {
      peer = await peerOrNothing(bench, section, {
        kind: peerKind,
        key,
        ids: peerIds,
        ctx,
        captured: peerIds.map((id) => captured[ids.indexOf(id)]),
        captures,
        databaseUrl,
      })
    }
    for (const id of ids) {
      const withPeer = peer && PEER_SCENARIOS.includes(id) ? peer : undefined
      const r = await runScenario(bench, { id, sc: SQLITE_SCENARIOS[id], backend, ctx, service, ceiling, peer: withPeer, key, extraGroups })
      r.wire = { ...wire[id], ...(withPeer ? { peer: section.peer.wire[id] } : {}) }
      section.scenarios.push(r)
    }
  } finally {
    await stop(ceiling.child)
    if (peer) await stop(peer.child)
  }
}

function summarise(rounds, sc, { includeVoid = false } = {}) {
  const valid = includeVoid ? rounds : rounds.filter((r) => !r.void)
  const roundsById = new Map()
  for (const r of rounds) roundsById.set(r.round, r)
  const pick = (f) => median(valid.map(f))
  const spread = (xs) => ({ median: round3(median(xs)), min: xs.length ? Math.min(...xs) : null, max: xs.length ? Math.max(...xs) : null })
  const expectErrors = rounds.reduce((n, r) => n + r.service.errorStatus + r.service.socketErrors, 0)
  const withPeer = rounds.some((r) => r.peer)
  return {
    validRounds: valid.length,
    roundsAsked: roundsById.size,
    voidRuns: rounds.length - valid.length,
    rps: round2(pick((r) => r.service.rps)),
    ceilingRps: round2(pick((r) => r.ceiling.rps)),
    ratio: spread(valid.map((r) => r.ratio)),
    p50Ms: round3(pick((r) => r.service.p50Ms)),
    p99Ms: round3(pick((r) => r.service.p99Ms)),
    ceilingP50Ms: round3(pick((r) => r.ceiling.p50Ms)),
    ceilingP99Ms: round3(pick((r) => r.ceiling.p99Ms)),
    peakRssMb: Math.max(0, ...rounds.map((r) => r.service.memory?.peakRssMb ?? 0)),
    vmHwmMb: Math.max(0, ...rounds.map((r) => r.service.memory?.hwmMb ?? 0)),
    serverCpuPct: round2(pick((r) => r.service.serverCpuPct)),
    ceilingCpuPct: round2(pick((r) => r.ceiling.serverCpuPct)),
    cpuUsPerRequest: round2(pick((r) => r.service.cpuUsPerRequest)),
    ceilingCpuUsPerRequest: round2(pick((r) => r.ceiling.cpuUsPerRequest)),
    ...(rounds.some((r) => r.service.backingCpuUsPerRequest !== undefined)
      ? { backingCpuUsPerRequest: round2(pick((r) => r.service.backingCpuUsPerRequest)) }
      : {}),
    otherCpuPctMax: Math.max(0, ...rounds.map((r) => Math.max(r.service.cpu.otherPct, r.ceiling.cpu.otherPct, r.peer?.cpu.otherPct ?? 0))),
    httpErrors: expectErrors,
    expectedStatus: sc.expect,
    ...(withPeer
      ? {
          // Service ÷ peer of the same round, median over valid rounds: a slow or fast moment of the
          // machine moves both sides of a pair, not the ratio.
          peer: {
            rps: round2(pick((r) => r.peer.rps)),
            ratio: spread(valid.map((r) => r.peerRatio)),
            p50Ms: round3(pick((r) => r.peer.p50Ms)),
            p99Ms: round3(pick((r) => r.peer.p99Ms)),
            cpuPct: round2(pick((r) => r.peer.serverCpuPct)),
            cpuUsPerRequest: round2(pick((r) => r.peer.cpuUsPerRequest)),
            ...(rounds.some((r) => r.peer.backingCpuUsPerRequest !== undefined)
              ? { backingCpuUsPerRequest: round2(pick((r) => r.peer.backingCpuUsPerRequest)) }
              : {}),
            peakRssMb: Math.max(0, ...rounds.map((r) => r.peer.memory?.peakRssMb ?? 0)),
            vmHwmMb: Math.max(0, ...rounds.map((r) => r.peer.memory?.hwmMb ?? 0)),
            httpErrors: rounds.reduce((n, r) => n + r.peer.errorStatus + r.peer.socketErrors, 0),
          },
        }
      : {}),
    // Without a single valid round, the same figures over the void rounds, for orientation only.
    ...(valid.length === 0 && !includeVoid && rounds.length ? { voidRoundsOnly: summarise(rounds, sc, { includeVoid: true }) } : {}),
  }
}
