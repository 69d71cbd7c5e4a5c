import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics {
  readonly registry = new Registry()
  readonly requests = new Counter({
    name: 'animal_store_http_requests_total',
    help: 'HTTP requests by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  })
  readonly duration = new Histogram({
    name: 'animal_store_http_request_duration_seconds',
    help: 'Time from request to response, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  })
  readonly rateLimited = new Counter({
    name: 'animal_store_rate_limited_total',
    help: 'Requests refused with 429, by code (rate_limited or key_banned).',
    labelNames: ['code'] as const,
    registers: [this.registry],
  })
  readonly bans = new Counter({
    name: 'animal_store_bans_total',
    help: 'Temporary bans started (keys or client addresses that kept sending while limited).',
    registers: [this.registry],
  })
  readonly limiterFallback = new Counter({
    name: 'animal_store_limiter_fallback_total',
    help: 'Requests decided without the shared limiter store (fail-open local limiter or fail-closed 503).',
    labelNames: ['policy'] as const,
    registers: [this.registry],
  })
  readonly dependencyUp = new Gauge({
    name: 'animal_store_dependency_up',
    help: '1 when a dependency answered its last check, 0 when not.',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  })

  // Label children cached by key: prom-client would otherwise hash the label set on every request.
  private readonly requestChildren = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>()

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = method + ' ' + route + ' ' + status
    let child = this.requestChildren.get(key)
    if (child === undefined) {
      child = { count: this.requests.labels(method, route, String(status)), time: this.duration.labels(method, route) }
      this.requestChildren.set(key, child)
    }
    child.count.inc()
    child.time.observe(seconds)
  }

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'animal_store_' })
  }
}
