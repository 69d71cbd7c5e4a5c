import { Counter, type Metric, type Registry } from 'prom-client'

/** One (method, route) pair: its duration histogram and its count per status. */
interface Series {
  labels: { method: string; route: string }
  /** Observations per bucket (not cumulative; the last slot is above every bound). */
  buckets: Float64Array
  sum: number
  count: number
  /** Requests per status. */
  statuses: Map<number, StatusCount>
}

/** Requests of one (method, route, status), and how many of them the prom-client counter was told of. */
interface StatusCount {
  labels: { method: string; route: string; status: string }
  count: number
  reported: number
}

interface Options {
  registry: Registry
  requestsName: string
  requestsHelp: string
  durationName: string
  durationHelp: string
  buckets: readonly number[]
}

/**
 * The per-request metrics: requests by method, route and status (a counter) and their duration by
 * method and route (a histogram). A request only adds to plain numbers here; prom-client is told at
 * scrape time. Its own observe() and inc() re-check and re-hash the labels on every call, which cost
 * about 5% of a cached list request. The counter is prom-client's, brought up to date in its
 * collect(); the histogram renders itself in the form prom-client's Histogram does (same names,
 * labels and order), as a metric object the registry formats.
 */
export class RequestMetrics {
  private readonly series = new Map<string, Map<string, Series>>()
  /** Series and status counts in the order first seen: the order prom-client itself lists them in. */
  private readonly seriesInOrder: Series[] = []
  private readonly countsInOrder: StatusCount[] = []
  private readonly bounds: readonly number[]

  constructor(private readonly options: Options) {
    this.bounds = options.buckets
    const counts = this.countsInOrder
    new Counter({
      name: options.requestsName,
      help: options.requestsHelp,
      labelNames: ['method', 'route', 'status'] as const,
      registers: [options.registry],
      collect() {
        for (const n of counts) {
          if (n.count === n.reported) continue
          this.inc(n.labels, n.count - n.reported)
          n.reported = n.count
        }
      },
    })
    options.registry.registerMetric(this.histogram() as unknown as Metric)
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route)
    if (byMethod === undefined) {
      byMethod = new Map()
      this.series.set(route, byMethod)
    }
    let s = byMethod.get(method)
    if (s === undefined) {
      s = { labels: { method, route }, buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0, statuses: new Map() }
      byMethod.set(method, s)
      this.seriesInOrder.push(s)
    }
    let i = 0
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++
    s.buckets[i]!++
    s.sum += seconds
    s.count++
    const n = s.statuses.get(status)
    if (n !== undefined) n.count++
    else {
      const first: StatusCount = { labels: { method, route, status: String(status) }, count: 1, reported: 0 }
      s.statuses.set(status, first)
      this.countsInOrder.push(first)
    }
  }

  /** The histogram as prom-client's registry reads a metric (see Histogram.getForPromString). */
  private histogram() {
    const { durationName: name, durationHelp: help } = this.options
    const values = () => {
      const out: Array<{ labels: object; sharedLabels: object; value: number; metricName: string; exemplar: null | undefined }> = []
      for (const s of this.seriesInOrder) {
        let cumulative = 0
        for (const [i, le] of this.bounds.entries()) {
          cumulative += s.buckets[i]!
          out.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: `${name}_bucket`, exemplar: null })
        }
        out.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${name}_bucket`, exemplar: null })
        out.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum`, exemplar: undefined })
        out.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count`, exemplar: undefined })
      }
      return out
    }
    const metric = { name, help, type: 'histogram', aggregator: 'sum' }
    return {
      ...metric,
      labelNames: ['method', 'route'],
      getForPromString: async () => ({ ...metric, values: values() }),
      // The JSON form (getMetricsAsJSON): each value's labels in one object, as prom-client gives them.
      get: async () => ({
        ...metric,
        values: values().map(({ labels, sharedLabels, ...v }) => ({ ...v, labels: { ...labels, ...sharedLabels } })),
      }),
      reset: () => {
        this.series.clear()
        this.seriesInOrder.length = 0
        this.countsInOrder.length = 0
      },
    }
  }
}
