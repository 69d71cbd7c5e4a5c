import { getHeapStatistics } from 'node:v8'
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import { RequestMetrics } from './request-metrics.js'

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics {
  readonly registry = new Registry()
  /** animal_store_http_requests_total and animal_store_http_request_duration_seconds (see RequestMetrics). */
  private readonly requests = new RequestMetrics({
    registry: this.registry,
    requestsName: 'animal_store_http_requests_total',
    requestsHelp: 'HTTP requests by method, route pattern and status.',
    durationName: 'animal_store_http_request_duration_seconds',
    durationHelp: 'Time from request to response, by method and route pattern.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
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
  readonly limiterCalls = new Counter({
    name: 'animal_store_limiter_redis_calls_total',
    help: 'Script calls the rate limiter made to Redis: one per run of admissions a key leases (LIMITER_LEASE_MAX), one per request of a keyless address or refused request.',
    registers: [this.registry],
  })
  readonly usageDropped = new Counter({
    name: 'animal_store_usage_dropped_total',
    help: 'Requests left out of usage history: the counts not yet written reached their bound (storage refusing writes for long).',
    registers: [this.registry],
  })
  readonly connectionsRefused = new Counter({
    name: 'animal_store_connections_refused_total',
    help: 'Connections refused, by listener and reason (per_address: closed as soon as accepted, over its client address share; max_connections: the listener full; pipelining: closed with 32 requests unanswered on it when another arrived).',
    labelNames: ['listener', 'reason'] as const,
    registers: [this.registry],
  })
  readonly connectionsEvicted = new Counter({
    name: 'animal_store_connections_evicted_total',
    help: 'Idle connections closed by a full listener to make room for a new connection of a site (IPv4 address, IPv6 /48) holding fewer, by listener.',
    labelNames: ['listener'] as const,
    registers: [this.registry],
  })
  readonly dependencyUp = new Gauge({
    name: 'animal_store_dependency_up',
    help: '1 when a dependency answered its last check, 0 when not.',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  })

  readonly webhookDeliveries = new Counter({
    name: 'animal_store_webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this process, by outcome: delivered (a 2xx), failed_attempt (tried again later), gave_up (the retry schedule ended), gone (a 410: the endpoint disabled), interrupted (the server stopped during it; due again at once); not_sent: deliveries of a disabled endpoint given up unsent.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  })
  /** What the webhook queue's gauges read when scraped (the store's counts); none: they are not set. */
  webhookQueue: (() => Promise<{ pending: number; oldestPendingAt: number | null; undispatched: number; now: number }>) | undefined
  readonly webhookPending = new Gauge({
    name: 'animal_store_webhook_deliveries_pending',
    help: 'Webhook deliveries not yet delivered nor given up (due, waiting for a retry, or in flight), in the whole store; read when scraped.',
    registers: [this.registry],
    collect: () => this.collectWebhookQueue(),
  })
  readonly webhookOldestPending = new Gauge({
    name: 'animal_store_webhook_oldest_pending_seconds',
    help: 'Age of the oldest webhook delivery not yet delivered nor given up, or of the oldest event an enabled endpoint has not been sent yet if older (0: none), in the whole store; read when scraped.',
    registers: [this.registry],
    collect: () => this.collectWebhookQueue(),
  })
  readonly webhookUndispatched = new Gauge({
    name: 'animal_store_webhook_events_undispatched',
    help: 'Events written that the enabled webhook endpoint furthest behind has not reached yet (whether it receives them or not), in the whole store; read when scraped.',
    registers: [this.registry],
    collect: () => this.collectWebhookQueue(),
  })
  /** The store's read of the scrape in progress, which the three gauges share. */
  private webhookQueueRead: Promise<void> | undefined

  /**
   * The three queue gauges from one read of the store, which each of them waits for: prom-client
   * renders the metrics of a scrape at once, so a gauge that did not wait was shown with the value
   * of the scrape before.
   */
  private collectWebhookQueue(): Promise<void> {
    this.webhookQueueRead ??= this.readWebhookQueue().finally(() => {
      this.webhookQueueRead = undefined
    })
    return this.webhookQueueRead
  }

  /** A store that cannot answer leaves the gauges as they were (/metrics still answers). */
  private async readWebhookQueue(): Promise<void> {
    const stats = await this.webhookQueue?.().catch(() => undefined)
    if (stats === undefined) return
    this.webhookPending.set(stats.pending)
    this.webhookOldestPending.set(stats.oldestPendingAt === null ? 0 : Math.max(0, (stats.now - stats.oldestPendingAt) / 1000))
    this.webhookUndispatched.set(stats.undispatched)
  }

  /** Set once: a process's heap is sized when it starts. */
  readonly heapLimit = new Gauge({
    name: 'animal_store_heap_limit_bytes',
    help: "The bound of this process's JavaScript heap (V8's heap_size_limit: the old space's, MAX_HEAP_MB or node's --max-old-space-size, and the young generation's).",
    registers: [this.registry],
  })

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe(method, route, status, seconds)
  }

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'animal_store_' })
    this.heapLimit.set(getHeapStatistics().heap_size_limit)
  }
}
