#!/usr/bin/env node
// Animal Store benchmark: the built service as a real process against a bare node:http "ceiling"
// that serves the very same bytes, under wrk, with CPU pinning and interference detection.
// See bench/README.md. Run: npm run build && node bench/run.mjs [--quick] [options]
// The sections are in bench/sections/, what they share in bench/lib/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { installGuards, onCleanup, shutdown } from './lib/children.mjs'
import { machineInfo, preflight } from './lib/machine.mjs'
import { parseOptions } from './lib/options.mjs'
import { computeTargets, markdownReport } from './lib/report.mjs'
import { LOAD_CPU, PEERS, SERVER_CPU } from './lib/scenarios.mjs'
import { clusterSection } from './sections/cluster.mjs'
import { durabilitySection } from './sections/durability.mjs'
import { growthSection } from './sections/growth.mjs'
import { ordersSection } from './sections/orders.mjs'
import { pgSection } from './sections/pg.mjs'
import { profileSection } from './sections/profile.mjs'
import { freshCatalogue, sqliteSection } from './sections/sqlite.mjs'

const opts = parseOptions()
const log = (msg) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`)

// Filled in as the run goes; on an abort (deadline, Ctrl-C, error) what was measured is still written.
let results = null
let written = false
installGuards(opts.maxMinutes * 60_000, async (why) => {
  if (results && !written) {
    results.aborted = why
    writeResults(results)
  }
})
const tmp = mkdtempSync(join(os.tmpdir(), 'animal-store-bench-'))
onCleanup(() => {
  if (opts.keepTmp) log(`temp dir kept: ${tmp}`)
  else rmSync(tmp, { recursive: true, force: true })
})

/** @type {import('./lib/rounds.mjs').Bench} */
const bench = { opts, log, tmp }

// ---------------------------------------------------------------------------------------------

async function main() {
  preflight()
  const started = new Date()
  results = {
    version: 1,
    startedAt: started.toISOString(),
    quick: opts.quick,
    options: { ...opts, out: undefined },
    machine: machineInfo(tmp),
    pinning: {
      serverCpu: SERVER_CPU,
      loadCpu: LOAD_CPU,
      note: 'server, ceiling and peers: taskset -c 1; wrk and paced generator: taskset -c 0',
    },
    peers: opts.peers ? PEERS : 'not run (--no-peers)',
    settings: {
      LOG_LEVEL: 'info',
      LOG_FILE: '<tmp>/service-*.log',
      DURABILITY: 'process unless stated',
      HOST: '127.0.0.1',
      BOOTSTRAP_KEY: 'false',
      NODE_ENV: 'production',
    },
  }
  log(`${opts.quick ? 'quick' : 'full'} run: ${opts.rounds} round(s) x ${opts.duration}s, ${opts.connections} connections; temp dir ${tmp}`)

  // A section that fails is recorded as such; the others still run.
  const section = async (name, key, fn) => {
    try {
      return await fn()
    } catch (error) {
      log(`${name}: FAILED: ${error.message}`)
      results[key] = { ...(results[key] ?? {}), status: 'failed', reason: error.message }
      return undefined
    }
  }
  let mainDb
  if (opts.only.includes('main')) mainDb = await section('SQLite scenarios', 'sqlite', () => sqliteSection(bench, results))
  if (opts.profile && opts.only.includes('profile')) {
    await section('profile', 'profile', async () => profileSection(bench, results, mainDb ?? (await freshCatalogue(bench, 'profile'))))
  }
  if (opts.only.includes('orders')) await section('order flow', 'orders', () => ordersSection(bench, results))
  if (opts.growth.length && opts.only.includes('growth')) await section('growth', 'growth', () => growthSection(bench, results))
  if (opts.durability && opts.only.includes('durability'))
    await section('durability', 'durability', () => durabilitySection(bench, results))
  if (opts.pg && opts.only.includes('pg')) await section('PG+Redis', 'pg', () => pgSection(bench, results))
  else results.pg = { status: 'not run', reason: opts.quick ? 'skipped in --quick' : 'skipped (--no-pg or --only)', scenarios: [] }
  if (opts.cluster && opts.only.includes('cluster')) await section('cluster', 'cluster', () => clusterSection(bench, results))

  writeResults(results)
}

function writeResults(r) {
  written = true
  r.targets = computeTargets(r)
  r.finishedAt = new Date().toISOString()
  r.durationSeconds = Math.round((Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000)
  mkdirSync(opts.out, { recursive: true })
  const base = join(opts.out, `${r.startedAt.slice(0, 10)}${opts.quick ? '-quick' : ''}`)
  writeFileSync(`${base}.json`, JSON.stringify(r, null, 2) + '\n')
  const md = markdownReport(r)
  writeFileSync(`${base}.md`, md)
  process.stdout.write(`\n${md}\n`)
  log(`wrote ${base}.json and ${base}.md${r.aborted ? ` (partial: ${r.aborted})` : ''}`)
}

try {
  await main()
} finally {
  await shutdown()
}
