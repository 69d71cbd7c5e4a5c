// The CPU profile of the service under load.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { stop } from '../lib/children.mjs'
import { runWrk } from '../lib/load.mjs'
import { summariseProfile } from '../lib/profile.mjs'
import { round2 } from '../lib/rounds.mjs'
import { LOAD_CPU, SERVER_CPU, SQLITE_SCENARIOS } from '../lib/scenarios.mjs'
import { ROOT, startService } from '../lib/service.mjs'

/** @typedef {import('../lib/rounds.mjs').Bench} Bench */

/**
 * One GET list round under node --cpu-prof and --trace-gc: where the service's CPU goes, and its
 * garbage per request.
 * @param {Bench} bench
 */
export async function profileSection(bench, results, { dbFile, key }) {
  const { opts, log, tmp } = bench
  const dir = join(tmp, 'cpu-profile')
  mkdirSync(dir, { recursive: true })
  const service = await startService({
    env: opts.serviceEnv,
    databaseUrl: dbFile,
    logFile: join(tmp, 'service-profile.log'),
    cpu: SERVER_CPU,
    nodeFlags: [...opts.serviceNodeFlags, '--cpu-prof', `--cpu-prof-dir=${dir}`, '--trace-gc'],
  })
  let run
  let fromUs
  let toUs
  // --trace-gc lines (on the service's stdout) seen during the measured round.
  const gc = { collecting: false, events: [] }
  let partial = ''
  service.child.stdout.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()
    if (!gc.collecting) return
    for (const line of lines) {
      const m = /ms: ([A-Za-z-]+(?: \([a-z]+\))?) ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \/ ([\d.]+) ms/.exec(line)
      if (m) gc.events.push({ kind: m[1], beforeMb: Number(m[2]), afterMb: Number(m[3]), pauseMs: Number(m[4]) })
    }
  })
  try {
    const sc = SQLITE_SCENARIOS.list20
    log(`profile: node --cpu-prof, ${sc.name}, warm-up ${Math.max(1, opts.warmup)}s + one ${opts.duration}s round`)
    await runWrk({
      port: service.port,
      path: sc.path(),
      key,
      seconds: Math.max(1, opts.warmup),
      connections: opts.connections,
      cpu: LOAD_CPU,
    })
    fromUs = Number(process.hrtime.bigint() / 1000n)
    gc.collecting = true
    run = await runWrk({ port: service.port, path: sc.path(), key, seconds: opts.duration, connections: opts.connections, cpu: LOAD_CPU })
    gc.collecting = false
    toUs = Number(process.hrtime.bigint() / 1000n)
  } finally {
    await stop(service.child) // SIGTERM: graceful close; V8 writes the profile on exit
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
  if (!file) {
    results.profile = { status: 'not run', reason: 'no .cpuprofile was written (did the service exit on SIGTERM?)' }
    return
  }
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
  const summary = summariseProfile(profile, { root: ROOT, fromUs, toUs })
  const scavenges = gc.events.filter((e) => e.kind.startsWith('Scavenge'))
  const pauses = gc.events.map((e) => e.pauseMs)
  const roundMs = (toUs - fromUs) / 1000
  const gcSummary = {
    events: gc.events.length,
    scavenges: scavenges.length,
    markCompacts: gc.events.filter((e) => e.kind.includes('Mark')).length,
    pauseMsTotal: round2(pauses.reduce((a, b) => a + b, 0)),
    pauseMsMax: pauses.length ? Math.max(...pauses) : 0,
    pausePctOfRound: round2((pauses.reduce((a, b) => a + b, 0) / roundMs) * 100),
    // Young-generation garbage per request: what the scavenges freed over the round / requests.
    scavengedKbPerRequest: run.requests ? round2((scavenges.reduce((a, e) => a + e.beforeMb - e.afterMb, 0) * 1024) / run.requests) : null,
  }
  results.profile = {
    status: 'ok',
    scenario: 'list20',
    rpsUnderProfiler: run.rps,
    p99MsUnderProfiler: run.p99Ms,
    gc: gcSummary,
    ...summary,
  }
  if (opts.keepTmp) results.profile.file = join(dir, file)
}
