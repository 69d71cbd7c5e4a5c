#!/usr/bin/env node
// A tiny open-loop load generator: sends GET requests at a FIXED rate, whatever the latency.
//
// Why not wrk: wrk is closed-loop (each connection waits for its answer before the next request),
// so its rate follows the latency, and its Lua delay() only pauses between requests on one
// connection. wrk2 (which paces) is not packaged here. This generator schedules request i at
// t0 + i/rate, sends it on a keep-alive http.Agent as soon as it is due, and records two latencies:
//   - service latency: from the moment the request is handed to the socket layer to the end of the response;
//   - schedule latency: from the moment the request was DUE (so a stall that delays later sends is
//     counted against it too: no coordinated omission).
// At a rate well below saturation both are nearly equal; if schedule p99 grows, the rate was too high.
//
// Usage: node bench/paced.mjs --url http://127.0.0.1:PORT/v1/pets?limit=20 --rate 1000 --duration 10
//          [--paths-file FILE] [--warmup 2] [--header "Authorization: Bearer KEY"] [--connections 32]
// --paths-file: one path per line, used round-robin instead of the URL's own path (so that a
// cache in the service cannot answer every request from memory).
// Prints one line: BENCH_JSON {...} (latencies in microseconds).
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    rate: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '1' },
    header: { type: 'string', multiple: true, default: [] },
    connections: { type: 'string', default: '32' },
    'expect-status': { type: 'string', default: '200' },
    'paths-file': { type: 'string' },
  },
})
if (!values.url) {
  process.stderr.write('paced.mjs: --url is required\n')
  process.exit(2)
}

const url = new URL(values.url)
const paths = values['paths-file']
  ? readFileSync(values['paths-file'], 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('/'))
  : [url.pathname + url.search]
const rate = Number(values.rate)
const duration = Number(values.duration)
const warmup = Number(values.warmup)
const expectStatus = Number(values['expect-status'])
const headers = {}
for (const h of values.header) {
  const i = h.indexOf(':')
  headers[h.slice(0, i).trim()] = h.slice(i + 1).trim()
}
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(values.connections) })

const intervalNs = 1e9 / rate
const warmupCount = Math.round(warmup * rate)
const measuredCount = Math.round(duration * rate)
const total = warmupCount + measuredCount
const serviceUs = new Float64Array(measuredCount)
const scheduleUs = new Float64Array(measuredCount)
let recorded = 0
let ok = 0
let bad = 0
let errors = 0
let done = 0
let next = 0
let firstMeasuredSend = 0n
let lastMeasuredEnd = 0n
const statuses = {}

const t0 = process.hrtime.bigint() + 50_000_000n // start 50 ms from now
const dueAt = (i) => t0 + BigInt(Math.round(i * intervalNs))

function send(i) {
  const due = dueAt(i)
  const sent = process.hrtime.bigint()
  if (i === warmupCount) firstMeasuredSend = sent
  const req = http.request({ agent, host: url.hostname, port: url.port, path: paths[i % paths.length], method: 'GET', headers }, (res) => {
    res.on('data', () => {})
    res.on('end', () => {
      const end = process.hrtime.bigint()
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
      if (res.statusCode === expectStatus) ok++
      else bad++
      if (i >= warmupCount) {
        serviceUs[recorded] = Number(end - sent) / 1000
        scheduleUs[recorded] = Number(end - due) / 1000
        recorded++
        if (end > lastMeasuredEnd) lastMeasuredEnd = end
      }
      finish()
    })
  })
  req.on('error', () => {
    errors++
    finish()
  })
  req.end()
}

function finish() {
  done++
  if (done === total) report()
}

function tick() {
  const now = process.hrtime.bigint()
  while (next < total && dueAt(next) <= now) send(next++)
  if (next < total) {
    const waitMs = Number(dueAt(next) - process.hrtime.bigint()) / 1e6
    setTimeout(tick, Math.max(0, Math.floor(waitMs)))
  }
}

function percentiles(values, n) {
  const sorted = Float64Array.from(values.subarray(0, n)).sort()
  const at = (q) => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.ceil((q / 100) * n) - 1)])
  let sum = 0
  for (let i = 0; i < n; i++) sum += sorted[i]
  return { 50: at(50), 90: at(90), 99: at(99), 99.9: at(99.9), max: n ? sorted[n - 1] : 0, mean: n ? sum / n : 0 }
}

function report() {
  const seconds = Number(lastMeasuredEnd - firstMeasuredSend) / 1e9
  const out = {
    targetRate: rate,
    achievedRate: seconds > 0 ? recorded / seconds : 0,
    sent: total,
    distinctPaths: paths.length,
    measured: recorded,
    ok,
    unexpectedStatus: bad,
    socketErrors: errors,
    statuses,
    serviceLatencyUs: percentiles(serviceUs, recorded),
    scheduleLatencyUs: percentiles(scheduleUs, recorded),
  }
  process.stdout.write(`BENCH_JSON ${JSON.stringify(out)}\n`)
  agent.destroy()
  process.exit(0)
}

// Bounded: whatever happens, stop after the schedule plus 15 s.
setTimeout(
  () => {
    process.stderr.write('paced.mjs: requests still pending at the deadline; reporting what completed\n')
    report()
  },
  (warmup + duration) * 1000 + 15_000,
).unref()

setTimeout(tick, 50)
