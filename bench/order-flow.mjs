#!/usr/bin/env node
import { readFileSync } from 'node:fs'
// The order-flow load of bench/sections/orders.mjs: a closed loop per connection, each over pets of
// its own (so no two connections race for one animal), repeating: place an order (201), then
// cancel it (the animal is available again and is ordered again) or, one flow in COMPLETE_EVERY,
// complete it (the animal is sold; the connection goes on with its next pet). wrk cannot do this:
// each request needs the id the one before answered. Prints one line `BENCH_JSON {...}`.
// Usage: node bench/order-flow.mjs --port P --key K --ids-file F --connections N --duration S [--warmup S]
import http from 'node:http'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    key: { type: 'string' },
    'ids-file': { type: 'string' },
    connections: { type: 'string', default: '16' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
  },
})
const COMPLETE_EVERY = 4
const port = Number(values.port)
const connections = Number(values.connections)
const ids = readFileSync(values['ids-file'], 'utf8').split('\n').filter(Boolean)
if (ids.length < connections) throw new Error(`${ids.length} available pets for ${connections} connections`)
const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
const headers = { authorization: `Bearer ${values.key}`, 'content-type': 'application/json' }

/** One POST; resolves with its status, body and latency (µs). */
function post(path, body) {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', path, method: 'POST', agent, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        text += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode, text, us: Number(process.hrtime.bigint() - started) / 1000 }))
    })
    req.setTimeout(5000, () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end(body)
  })
}

const stats = { measuring: false, latencies: [], requests: 0, flows: 0, completed: 0, cancelled: 0, unexpected: {}, socketErrors: 0 }
const count = (res, expected) => {
  if (!stats.measuring) return
  stats.requests++
  stats.latencies.push(res.us)
  if (res.status !== expected) stats.unexpected[res.status] = (stats.unexpected[res.status] ?? 0) + 1
}

let running = true
async function connection(own) {
  let next = 0
  let flows = 0
  while (running && next < own.length) {
    try {
      const placed = await post('/v1/store/orders', `{"petId":${own[next]}}`)
      count(placed, 201)
      if (placed.status !== 201) {
        next++ // this animal is not available (anymore): the next one
        continue
      }
      const complete = ++flows % COMPLETE_EVERY === 0
      // `{}` (none would do as well: these routes take no body).
      const ended = await post(`/v1/store/orders/${JSON.parse(placed.text).id}/${complete ? 'complete' : 'cancel'}`, '{}')
      count(ended, 200)
      if (stats.measuring) {
        stats.flows++
        stats[complete ? 'completed' : 'cancelled']++
      }
      if (complete) next++
    } catch {
      if (stats.measuring) stats.socketErrors++
    }
  }
}

// Each connection its own share of the pets, interleaved (ids in ascending order spread evenly).
const shares = Array.from({ length: connections }, (_, c) => ids.filter((_, i) => i % connections === c))
const loops = shares.map((own) => connection(own))
await new Promise((r) => setTimeout(r, Number(values.warmup) * 1000))
stats.measuring = true
const started = process.hrtime.bigint()
await new Promise((r) => setTimeout(r, Number(values.duration) * 1000))
stats.measuring = false
const durationUs = Number(process.hrtime.bigint() - started) / 1000
running = false
await Promise.all(loops)
agent.destroy()

const sorted = stats.latencies.sort((a, b) => a - b)
const at = (q) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((q / 100) * sorted.length))] ?? 0)
process.stdout.write(
  `BENCH_JSON ${JSON.stringify({
    durationUs: Math.round(durationUs),
    requests: stats.requests,
    flows: stats.flows,
    completed: stats.completed,
    cancelled: stats.cancelled,
    unexpectedStatus: stats.unexpected,
    socketErrors: stats.socketErrors,
    latencyUs: { 50: at(50), 90: at(90), 99: at(99), max: Math.round(sorted[sorted.length - 1] ?? 0) },
  })}\n`,
)
