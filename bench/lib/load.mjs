// Load generators (wrk, the paced generator, the fsync baseline), each a bounded child process,
// and the measurement window around them: CPU accounting, memory sampling, the void rule.
import { join } from 'node:path'
import { sampleMemory, startCpuWindow } from '../../tools/proc.mjs'
import { run } from './children.mjs'
import { ROOT } from './service.mjs'

const LUA = join(ROOT, 'bench/wrk-report.lua')
const us2ms = (us) => Math.round(us) / 1000

function benchJson(r, what) {
  const line = r.stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (!line) {
    const why = (r.stderr || r.stdout).trim().split('\n').slice(-5).join(' | ')
    throw new Error(`${what} produced no result (exit ${r.code}${r.timedOut ? ', killed at its time limit' : ''}): ${why}`)
  }
  return JSON.parse(line.slice('BENCH_JSON '.length))
}

/** `taskset -c CPU wrk -t1 -cN -dS --latency`; closed loop, keep-alive connections. */
export async function runWrk({ port, path, method = 'GET', body, key, seconds, connections, cpu }) {
  const args = ['-c', String(cpu), 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '5s']
  if (key) args.push('-H', `Authorization: Bearer ${key}`)
  args.push('-s', LUA, `http://127.0.0.1:${port}${path}`, '--', method, body ?? '')
  const r = await run('taskset', args, { cwd: ROOT, timeoutMs: (seconds + 20) * 1000 })
  const j = benchJson(r, 'wrk')
  const p = j.latencyUs.percentiles
  const e = j.errors
  return {
    rps: Math.round((j.requests / (j.durationUs / 1e6)) * 10) / 10,
    requests: j.requests,
    p50Ms: us2ms(p['50']),
    p90Ms: us2ms(p['90']),
    p99Ms: us2ms(p['99']),
    p999Ms: us2ms(p['99.9']),
    maxMs: us2ms(j.latencyUs.max),
    bytesPerResponse: j.requests ? Math.round(j.bytes / j.requests) : 0,
    errorStatus: e.status,
    socketErrors: e.connect + e.read + e.write + e.timeout,
    raw: j,
  }
}

/** `taskset -c CPU node bench/paced.mjs`: fixed-rate GETs (see paced.mjs). */
export async function runPaced({ port, path, pathsFile, key, rate, seconds, warmup, cpu }) {
  const args = [
    '-c',
    String(cpu),
    process.execPath,
    join(ROOT, 'bench/paced.mjs'),
    '--url',
    `http://127.0.0.1:${port}${path}`,
    '--rate',
    String(rate),
    '--duration',
    String(seconds),
    '--warmup',
    String(warmup),
    '--header',
    `Authorization: Bearer ${key}`,
  ]
  if (pathsFile) args.push('--paths-file', pathsFile)
  const r = await run('taskset', args, { cwd: ROOT, timeoutMs: (seconds + warmup + 30) * 1000 })
  const j = benchJson(r, 'paced load')
  const s = j.serviceLatencyUs
  const d = j.scheduleLatencyUs
  return {
    targetRate: j.targetRate,
    achievedRate: Math.round(j.achievedRate * 10) / 10,
    requests: j.measured,
    p50Ms: us2ms(s['50']),
    p90Ms: us2ms(s['90']),
    p99Ms: us2ms(s['99']),
    maxMs: us2ms(s.max),
    scheduleP50Ms: us2ms(d['50']),
    scheduleP99Ms: us2ms(d['99']),
    errorStatus: j.unexpectedStatus,
    socketErrors: j.socketErrors,
    statuses: j.statuses,
  }
}

/** `taskset -c CPU node bench/fsync-baseline.mjs`: single-row fsync'd commits, no HTTP. */
export async function runFsyncBaseline({ file, seconds, cpu }) {
  const args = ['-c', String(cpu), process.execPath, join(ROOT, 'bench/fsync-baseline.mjs'), file, String(seconds)]
  const r = await run('taskset', args, { cwd: ROOT, timeoutMs: (seconds + 30) * 1000 })
  const j = benchJson(r, 'fsync baseline')
  return {
    rps: Math.round(j.commitsPerSecond * 10) / 10,
    commits: j.commits,
    p50Ms: us2ms(j.commitLatencyUs['50']),
    p99Ms: us2ms(j.commitLatencyUs['99']),
  }
}

/**
 * Runs `fn` inside a measurement window. `groups` names the processes that belong to the
 * benchmark (server, ceiling, ksoftirqd, PostgreSQL/Redis for those scenarios); everything else
 * that used the CPU during the window is interference: above `thresholdPct` of one core (or as
 * much hypervisor steal) the run is void.
 */
export async function measured({ groups, memoryPid, thresholdPct }, fn) {
  const memory = memoryPid ? sampleMemory(memoryPid) : null
  const window = startCpuWindow(groups)
  const result = await fn()
  const cpu = window.end()
  const mem = memory?.stop()
  let voidReason = null
  if (cpu.otherPct > thresholdPct) voidReason = `other processes used ${cpu.otherPct}% of a core (limit ${thresholdPct}%)`
  else if (cpu.stealPct > thresholdPct) voidReason = `hypervisor steal ${cpu.stealPct}% of a core (limit ${thresholdPct}%)`
  return { ...result, cpu, ...(mem ? { memory: mem } : {}), voidReason }
}

/**
 * Waits (up to `maxWaitMs`) until `quietWindows` consecutive windows of `windowMs` each show no
 * more than `thresholdPct` of interference; a round started on a busy machine would only be void.
 */
export async function waitQuiet({ groups, thresholdPct, windowMs, maxWaitMs, quietWindows = 2, onWait = () => {} }) {
  const t = Date.now()
  let quiet = 0
  let last
  let told = 0
  for (;;) {
    const window = startCpuWindow(groups)
    await new Promise((r) => setTimeout(r, windowMs))
    last = window.end()
    quiet = last.otherPct <= thresholdPct ? quiet + 1 : 0
    if (quiet >= quietWindows || Date.now() - t >= maxWaitMs) break
    if (Date.now() - t - told >= 15_000) {
      told = Date.now() - t
      onWait(last.otherPct, Math.round(told / 1000))
    }
  }
  return { waitedMs: Date.now() - t, otherPct: last.otherPct, quiet: quiet >= quietWindows }
}

/** `taskset -c CPU node bench/order-flow.mjs`: closed-loop order flows (place, then cancel or complete). */
export async function runOrderFlow({ port, key, idsFile, connections, seconds, warmup, cpu }) {
  const script = join(ROOT, 'bench/order-flow.mjs')
  const args = ['-c', String(cpu), process.execPath, script, '--port', String(port), '--key', key, '--ids-file', idsFile]
  args.push('--connections', String(connections), '--duration', String(seconds), '--warmup', String(warmup))
  const r = await run('taskset', args, { cwd: ROOT, timeoutMs: (seconds + warmup + 30) * 1000 })
  const j = benchJson(r, 'order flow')
  const perSecond = (x) => Math.round((x / (j.durationUs / 1e6)) * 10) / 10
  return {
    rps: perSecond(j.requests),
    flowsPerSecond: perSecond(j.flows),
    requests: j.requests,
    flows: j.flows,
    completed: j.completed,
    cancelled: j.cancelled,
    p50Ms: us2ms(j.latencyUs['50']),
    p90Ms: us2ms(j.latencyUs['90']),
    p99Ms: us2ms(j.latencyUs['99']),
    maxMs: us2ms(j.latencyUs.max),
    unexpectedStatus: j.unexpectedStatus,
    socketErrors: j.socketErrors,
  }
}
