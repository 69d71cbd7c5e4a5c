import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Counter, Histogram, Registry } from 'prom-client'
import { RequestMetrics } from '../../src/ops/request-metrics.js'

const NAMES = {
  requestsName: 'animal_store_http_requests_total',
  requestsHelp: 'HTTP requests by method, route pattern and status.',
  durationName: 'animal_store_http_request_duration_seconds',
  durationHelp: 'Time from request to response, by method and route pattern.',
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
}

test("request metrics render exactly as prom-client's own Counter and Histogram would, scrape after scrape", async () => {
  const ours = new Registry()
  const metrics = new RequestMetrics({ registry: ours, ...NAMES })
  const theirs = new Registry()
  const counter = new Counter({
    name: NAMES.requestsName,
    help: NAMES.requestsHelp,
    labelNames: ['method', 'route', 'status'],
    registers: [theirs],
  })
  const histogram = new Histogram({
    name: NAMES.durationName,
    help: NAMES.durationHelp,
    labelNames: ['method', 'route'],
    buckets: NAMES.buckets,
    registers: [theirs],
  })
  const observe = (method: string, route: string, status: number, seconds: number) => {
    metrics.observe(method, route, status, seconds)
    counter.inc({ method, route, status: String(status) })
    histogram.observe({ method, route }, seconds)
  }
  const samples: Array<[string, string, number, number]> = [
    ['GET', '/v1/pets', 200, 0.0004],
    ['GET', '/v1/pets', 200, 0.0005], // on a bound: counted in that bucket
    ['GET', '/v1/pets', 429, 0.003],
    ['POST', '/v1/pets', 201, 0.02],
    ['GET', 'unmatched', 404, 7], // above every bound: only in +Inf, sum and count
    ['GET', '/v1/pets/:petId', 200, 0.1],
  ]
  for (const s of samples) observe(...s)
  assert.equal(await ours.metrics(), await theirs.metrics())
  assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON())
  // Later requests are added to what an earlier scrape reported, not counted twice.
  for (const s of samples.slice(0, 3)) observe(...s)
  observe('DELETE', '/v1/pets', 405, 0.0001)
  observe('POST', '/v1/pets', 400, 0.001) // a new status of an existing series, after a new series
  assert.equal(await ours.metrics(), await theirs.metrics())
  assert.match(await ours.metrics(), /animal_store_http_requests_total\{method="GET",route="\/v1\/pets",status="200"\} 4/)
})
