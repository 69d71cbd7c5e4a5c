// Smoke test of the benchmark harness (bench/run.mjs --quick): it starts the built service and the
// ceiling, drives them with wrk and the paced generator, and writes a JSON report with real numbers.
// It asserts that the harness works, never how fast the service is.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { missingPrerequisite } from '../../helpers/services.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

interface Run {
  rps: number
  p50Ms: number
  p99Ms: number
  errorStatus: number
  socketErrors: number
  cpuUsPerRequest: number | null
}
interface Round {
  ceiling: Run
  service: Run & { memory: { peakRssMb: number } }
  peer?: Run & { memory: { peakRssMb: number; hwmMb: number } }
  peerRatio?: number
}
interface Summary {
  cpuUsPerRequest: number
  vmHwmMb: number
  peer?: PeerSummary
}
interface PeerSummary {
  rps: number
  ratio: { median: number }
  cpuUsPerRequest: number
  vmHwmMb: number
}
interface Report {
  quick: boolean
  orders?: { rounds: OrderRound[]; summary?: { cpuUsPerRequest: number; flowsPerSecond: number } }
  machine: { node: string; wrk: string; cpuModel: string }
  sqlite: {
    peer?: { status: string; reason?: string }
    scenarios: {
      id: string
      peer?: string
      rounds: Round[]
      summary: Summary & { validRounds: number; voidRoundsOnly?: Summary }
      wire: { sameHeaders: boolean; sameBody: boolean; peer?: { sameBody: boolean; sameHeaders: boolean } }
    }[]
  }
  targets: { target: string; measured: number | null }[]
  growth?: { sizes: { size: number; queries: { id: string; runs: { achievedRate: number; p50Ms: number; p99Ms: number }[] }[] }[] }
}

function runBench(args: string[], timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const env = { ...process.env }
  delete env.NODE_V8_COVERAGE // the harness and the service it starts are not the code under coverage
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bench/run.mjs'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (c) => (output += c))
    child.stderr.on('data', (c) => (output += c))
    // SIGINT lets the harness stop its own children (servers, wrk) before it exits.
    const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, output })
    })
  })
}

/** A round of the order flow, as the report writes it. */
interface OrderRound {
  flows: number
  completed: number
  cancelled: number
  unexpectedStatus: Record<string, number>
  socketErrors: number
}

test('bench/run.mjs --quick measures the service, the ceiling and bare Fastify and writes a JSON report', {
  timeout: 150_000,
}, async (t) => {
  if (spawnSync('wrk', ['-v']).error) return void missingPrerequisite(t, 'wrk is not installed (apt-get install -y wrk)')
  if (spawnSync('taskset', ['-V']).error) return void missingPrerequisite(t, 'taskset is not installed (util-linux)')
  if (os.cpus().length < 2) return void missingPrerequisite(t, 'the benchmark needs 2 CPUs', false)
  assert.ok(existsSync(join(ROOT, 'dist/server.js')), 'dist/server.js is missing: run `npm run build` first')

  const out = mkdtempSync(join(os.tmpdir(), 'bench-smoke-'))
  t.after(() => rmSync(out, { recursive: true, force: true }))
  // One-second rounds and warm-ups: the harness's every step still runs (servers, wrk, the paced
  // generator, the report), in about half the time of --quick's own (CI runs this file alone).
  const run = await runBench(['--quick', '--duration', '1', '--warmup', '1', '--paced-duration', '1', '--out', out], 120_000)
  assert.equal(run.code, 0, `bench exited with ${run.code ?? run.signal}:\n${run.output.slice(-4000)}`)

  const jsonFile = readdirSync(out).find((f) => f.endsWith('-quick.json'))
  assert.ok(jsonFile, `no *-quick.json in ${out}; output:\n${run.output.slice(-2000)}`)
  const report = JSON.parse(readFileSync(join(out, jsonFile), 'utf8')) as Report
  assert.ok(
    readdirSync(out).some((f) => f.endsWith('-quick.md')),
    'no Markdown report',
  )
  assert.match(run.output, /\| Scenario \|/, 'the table is printed')

  assert.equal(report.quick, true)
  assert.ok(report.machine.node && report.machine.wrk && report.machine.cpuModel, 'machine info recorded')
  assert.ok(report.sqlite.scenarios.length >= 1, 'at least one scenario ran')
  for (const s of report.sqlite.scenarios) {
    assert.ok(s.rounds.length >= 1, `${s.id}: no round`)
    assert.ok(s.wire.sameHeaders && s.wire.sameBody, `${s.id}: the ceiling does not serve the service's captured response`)
    for (const r of s.rounds) {
      for (const side of ['ceiling', 'service'] as const) {
        assert.ok(r[side].rps > 0, `${s.id} ${side}: requests/s`)
        assert.ok(r[side].p50Ms > 0 && r[side].p99Ms > 0, `${s.id} ${side}: latency`)
      }
      assert.ok(r.service.memory.peakRssMb > 0, `${s.id}: RSS sampled`)
      assert.equal(r.service.errorStatus + r.service.socketErrors, 0, `${s.id}: every request answered with the expected status`)
    }
  }

  // --quick runs list20 and post, the peer's scenarios: bare Fastify in the same rounds.
  const withPeer = report.sqlite.scenarios.filter((s) => s.peer === 'bare-fastify')
  assert.deepEqual(
    withPeer.map((s) => s.id).sort(),
    ['list20', 'post'],
    `bare Fastify ran on list20 and post (${JSON.stringify(report.sqlite.peer)})`,
  )
  for (const s of withPeer) {
    assert.ok(s.wire.peer?.sameBody && s.wire.peer.sameHeaders, `${s.id}: bare Fastify does not serve the service's captured response`)
    for (const r of s.rounds) {
      assert.ok(r.peer, `${s.id}: a round without the peer`)
      assert.ok(r.peer.rps > 0 && r.peer.p99Ms > 0, `${s.id} peer: requests/s and latency`)
      assert.equal(r.peer.errorStatus + r.peer.socketErrors, 0, `${s.id} peer: every request answered with the expected status`)
      assert.ok(r.peerRatio !== undefined && r.peerRatio > 0, `${s.id}: service/peer of the round`)
    }
    // A busy machine voids the one quick round: the harness then summarises the void rounds.
    const summary = s.summary.validRounds > 0 ? s.summary : s.summary.voidRoundsOnly
    const peer = summary?.peer
    assert.ok(
      summary && peer && peer.ratio.median > 0 && peer.cpuUsPerRequest > 0 && peer.vmHwmMb > 0,
      `${s.id}: peer summary ${JSON.stringify(s.summary)}`,
    )
    assert.ok(summary.cpuUsPerRequest > 0 && summary.vmHwmMb > 0, `${s.id}: the service's CPU per request and VmHWM`)
  }
  assert.match(run.output, /\| Service\/peer median/, 'the peer table is printed')
  assert.ok(
    report.targets.some((t) => t.target.includes('service/bare Fastify')),
    'the bare Fastify goal is in the targets (measured when its rounds are valid)',
  )
  // The order flow: orders placed and ended, every answer the expected one, the CPU per request.
  const orders = report.orders
  assert.ok(orders?.summary, `the order flow ran: ${JSON.stringify(orders)}`)
  assert.ok(
    orders.rounds.every((r) => r.flows > 0 && r.completed > 0 && r.cancelled > 0),
    'orders placed, cancelled and completed',
  )
  assert.deepEqual(
    orders.rounds.map((r) => [r.unexpectedStatus, r.socketErrors]),
    orders.rounds.map(() => [{}, 0]),
    'every order answered 201 and every cancel and complete 200',
  )
  assert.ok(orders.summary.cpuUsPerRequest > 0 && orders.summary.flowsPerSecond > 0, `order flow summary ${JSON.stringify(orders.summary)}`)
  assert.match(run.output, /## The order flow/, 'the order flow table is printed')
  const growth = report.growth?.sizes ?? []
  assert.ok(growth.length >= 1, 'the growth check ran')
  for (const size of growth) {
    for (const q of size.queries) {
      assert.ok(q.runs.length >= 1 && q.runs.every((r) => r.achievedRate > 0 && r.p50Ms > 0), `growth ${size.size} ${q.id}: numbers`)
    }
  }
})
