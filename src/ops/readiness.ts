import { type StorageFault, StorageFaultError } from '../shared/outages.js'
import type { Metrics } from './metrics.js'

/** What /readyz checks: the store or the limiter, by its kind (sqlite, redis, …). */
export interface Dependency {
  readonly kind: string
  /** Rejects when the dependency cannot answer (a store: or cannot write, after a storage fault). */
  ping(): Promise<void>
}

/**
 * How long one answer of the dependency checks serves /readyz, from the moment it came in: the
 * probes of every balancer and every listener of this process cost at most one check (one store
 * query, one Redis PING) per interval, and a failure shows at most this much later (plus the
 * check's own PING_TIMEOUT_MS).
 */
export const READINESS_MAX_AGE_MS = 1000
const PING_TIMEOUT_MS = 1000

export interface ReadinessReport {
  ready: boolean
  body: {
    status: 'ready' | 'degraded' | 'unavailable'
    checks: {
      /** `reason` only while the store cannot write (StorageFault). */
      database: { engine: string; status: 'up' | 'down'; reason?: StorageFault }
      rateLimiter: { store: string; status: 'up' | 'down' }
    }
  }
}

export interface ReadinessOptions {
  storage: Dependency
  limiter: Dependency
  metrics: Metrics
  /** When the limiter fails closed, the service is not ready without it. */
  limiterRequired: boolean
  maxAgeMs?: number
}

/** The dependency checks of /readyz, shared by the listeners of a process: cached, one in flight at a time. */
export class Readiness {
  private last: { report: ReadinessReport; at: number } | undefined
  private running: Promise<ReadinessReport> | undefined

  constructor(private readonly options: ReadinessOptions) {}

  check(): Promise<ReadinessReport> {
    const last = this.last
    if (last !== undefined && performance.now() - last.at < (this.options.maxAgeMs ?? READINESS_MAX_AGE_MS))
      return Promise.resolve(last.report)
    this.running ??= this.run().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async run(): Promise<ReadinessReport> {
    const { storage, limiter, metrics, limiterRequired } = this.options
    const check = async (name: string, ping: () => Promise<void>) => {
      try {
        await withTimeout(ping(), PING_TIMEOUT_MS)
        metrics.dependencyUp.set({ dependency: name }, 1)
        return { status: 'up' as const }
      } catch (error) {
        metrics.dependencyUp.set({ dependency: name }, 0)
        return { status: 'down' as const, ...(error instanceof StorageFaultError ? { reason: error.fault } : {}) }
      }
    }
    const [database, rateLimiter] = await Promise.all([
      check(storage.kind, () => storage.ping()),
      check(limiter.kind, () => limiter.ping()),
    ])
    // A limiter that fails open still serves (on a local fallback, limits per instance): still
    // ready (200, so that a load balancer does not pull every instance when Redis dies), but
    // "degraded". Fail-closed, requests are refused without it: not ready.
    const ready = database.status === 'up' && (rateLimiter.status === 'up' || !limiterRequired)
    const report: ReadinessReport = {
      ready,
      body: {
        status: !ready ? 'unavailable' : rateLimiter.status === 'up' ? 'ready' : 'degraded',
        checks: { database: { engine: storage.kind, ...database }, rateLimiter: { store: limiter.kind, status: rateLimiter.status } },
      },
    }
    this.last = { report, at: performance.now() }
    return report
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}
