#!/usr/bin/env node
/**
 * What GET /v1/store/inventory costs with a large catalogue on SQLite: seeds N animals (default
 * 1,000,000; the benchmark's mix of statuses) into a fresh file, starts the built server on it,
 * and times the inventory (sequential requests on one keep-alive connection: latency; then a short
 * wrk run: throughput). Beside it, what counting the animals on each request would cost instead
 * (`SELECT status, count(*) … GROUP BY status`, on the `(status, id)` index), and a check that the
 * inventory's counts are the animals'.
 *
 *   npm run build && node bench/inventory-at-scale.mjs [--pets 1000000] [--requests 2000] [--seconds 5]
 *
 * Load goes to 127.0.0.1 only; the server is stopped at the end, also on an error.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { bearer } from '../tools/http.mjs'
import { stop } from './lib/children.mjs'
import { createBenchKey, seedSqlite, startService } from './lib/service.mjs'

const { values } = parseArgs({
  options: {
    pets: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '5' },
  },
})
const PETS = Number(values.pets)
const REQUESTS = Number(values.requests)
const SECONDS = Number(values.seconds)

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
const ms = (n) => `${n.toFixed(3)} ms`

const dir = mkdtempSync(join(tmpdir(), 'animal-store-inventory-'))
const file = join(dir, 'store.db')
let service
try {
  const { key } = await createBenchKey(file)
  const seeded = await seedSqlite(file, PETS)
  console.log(`seeded ${seeded.rows.toLocaleString('en')} animals in ${seeded.seconds} s (the triggers keep the counts meanwhile)`)

  // The alternative: count on each request.
  const db = new Database(file, { readonly: true })
  const count = db.prepare('SELECT status, count(*) AS n FROM pets WHERE status IS NOT NULL GROUP BY status')
  const counts = db.prepare('SELECT status, pets FROM pet_status_counts ORDER BY status')
  const timings = []
  let counted
  for (let i = 0; i < 7; i++) {
    const t = performance.now()
    counted = count.all()
    timings.push(performance.now() - t)
  }
  timings.sort((a, b) => a - b)
  const kept = counts.all()
  db.close()
  const asText = (rows, field) => rows.map((r) => `${r.status} ${Number(r[field]).toLocaleString('en')}`).join(', ')
  if (asText(kept, 'pets') !== asText(counted, 'n'))
    throw new Error(`counts ${asText(kept, 'pets')} but the animals are ${asText(counted, 'n')}`)
  console.log(`counting on each request instead: ${ms(timings[3])} median of 7 (${asText(counted, 'n')})`)

  service = await startService({ databaseUrl: file, logFile: join(dir, 'server.log'), cpu: 1 })
  const url = `http://127.0.0.1:${service.port}/v1/store/inventory`
  const headers = bearer(key)
  let body
  for (let i = 0; i < 200; i++) body = await (await fetch(url, { headers })).json()
  const latencies = []
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now()
    const res = await fetch(url, { headers })
    body = await res.json()
    latencies.push(performance.now() - t)
    if (res.status !== 200) throw new Error(`inventory answered ${res.status}: ${JSON.stringify(body)}`)
  }
  latencies.sort((a, b) => a - b)
  console.log(`GET /v1/store/inventory at ${PETS.toLocaleString('en')} animals: ${JSON.stringify(body)}`)
  console.log(
    `  ${REQUESTS} sequential requests (one keep-alive connection, client in this process): p50 ${ms(percentile(latencies, 0.5))}, p99 ${ms(percentile(latencies, 0.99))}`,
  )
  try {
    const out = execFileSync(
      'taskset',
      ['-c', '0', 'wrk', '-t1', '-c20', `-d${SECONDS}s`, '--latency', '-H', `Authorization: ${headers.authorization}`, url],
      { encoding: 'utf8' },
    )
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]
    const p50 = /\s50%\s+(\S+)/.exec(out)?.[1]
    const p99 = /\s99%\s+(\S+)/.exec(out)?.[1]
    console.log(`  wrk -c20 -d${SECONDS}s (server on CPU 1, wrk on CPU 0): ${rps} req/s, p50 ${p50}, p99 ${p99}`)
  } catch (error) {
    console.log(`  (no wrk run: ${error.message.split('\n')[0]})`)
  }
} finally {
  if (service) await stop(service.child, 5000)
  rmSync(dir, { recursive: true, force: true })
}
