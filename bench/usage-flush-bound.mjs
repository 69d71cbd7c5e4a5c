#!/usr/bin/env node
/**
 * Measures what a kill -9 costs the usage history: a server (dist/, SQLite, USAGE_FLUSH_MS as
 * configured, default 5000) gets a steady stream of requests from one key; at a random moment it is
 * killed with SIGKILL, and the counts stored in the file are compared with the requests answered.
 * The loss, in counts and in seconds of that traffic, must stay within one flush interval.
 *
 *   npm run build && node bench/usage-flush-bound.mjs [--runs 5] [--rate 200] [--flush-ms 5000]
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { bearer, freePort, request, waitHealthy } from '../tools/http.mjs'
import { createKeyWithCli } from '../tools/service-cli.mjs'
import { serviceEnv } from '../tools/service-env.mjs'
import { distCli } from './lib/service.mjs'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    rate: { type: 'string', default: '200' },
    'flush-ms': { type: 'string', default: '5000' },
  },
})
const RUNS = Number(values.runs)
const RATE = Number(values.rate)
const FLUSH_MS = Number(values['flush-ms'])
const ROOT = new URL('..', import.meta.url).pathname

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-flush-'))
  const db = join(dir, 'store.db')
  const env = serviceEnv({ DATABASE_URL: db, USAGE_FLUSH_MS: String(FLUSH_MS), LIMITER_STATE_FILE: 'off' })
  try {
    const created = await createKeyWithCli(distCli(env), { plan: 'enterprise', name: 'flush', perMinute: 1_000_000, perDay: 100_000_000 })
    const port = await freePort()
    const server = spawn(process.execPath, ['dist/server.js'], {
      cwd: ROOT,
      env: { ...env, PORT: String(port), ADMIN_PORT: 'off' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })))
    const child = { exited, err: '', out: '' }
    server.stderr.setEncoding('utf8').on('data', (s) => (child.err += s))
    await waitHealthy(port, child).catch((error) => {
      server.kill('SIGKILL') // never leave the server behind
      throw error
    })
    // Run for 2 to 4 flush intervals, then kill at a random point of the interval.
    const runMs = FLUSH_MS * 2 + Math.random() * FLUSH_MS * 2
    const started = performance.now()
    let answered = 0
    while (performance.now() - started < runMs) {
      const res = await request(port, { path: '/v1/pets?limit=1', headers: bearer(created.key) })
      if (res.status === 200) answered++
      await sleep(1000 / RATE)
    }
    const perSecond = answered / ((performance.now() - started) / 1000)
    server.kill('SIGKILL')
    await exited
    const file = new Database(db, { readonly: true })
    const stored = file.prepare('SELECT COALESCE(SUM(allowed), 0) AS n FROM usage_minutes WHERE key_id = ?').get(created.id).n
    file.close()
    const lost = answered - stored
    return { answered, stored, lost, lostSeconds: lost / perSecond }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

console.log(`USAGE_FLUSH_MS=${FLUSH_MS}, about ${RATE} requests/s from one key, SIGKILL at a random moment`)
let worst = 0
for (let i = 0; i < RUNS; i++) {
  const r = await run()
  worst = Math.max(worst, r.lostSeconds)
  console.log(
    `run ${i + 1}: answered ${r.answered}, stored ${r.stored}, lost ${r.lost} (${r.lostSeconds.toFixed(2)} s of traffic)${r.lost < 0 ? '  COUNTED TWICE' : ''}`,
  )
}
console.log(`worst loss: ${worst.toFixed(2)} s of traffic (bound: one flush interval, ${(FLUSH_MS / 1000).toFixed(2)} s)`)
process.exitCode = worst <= FLUSH_MS / 1000 ? 0 : 1
