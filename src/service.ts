import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { type AppDependencies, buildApp } from './app.js'
import type { Config } from './config/config.js'
import { createLimiter } from './limits/index.js'
import type { RateLimiter } from './limits/limiter.js'
import { Metrics } from './ops/metrics.js'
import { type Clock, systemClock } from './shared/clock.js'
import type { Drain } from './shared/drain.js'
import { openStorage } from './storage/index.js'
import type { Storage } from './storage/storage.js'

/** What a caller may hand in instead of what `config` says (a test's clock, an in-memory store, a logger). */
export interface ServiceOverrides {
  storage?: Storage
  limiter?: RateLimiter
  clock?: Clock
  metrics?: Metrics
  logger?: AppDependencies['logger']
  drain?: Drain
}

/** A ready service: its dependencies and both listeners' apps, not listening. */
export interface Service {
  config: Config
  storage: Storage
  limiter: RateLimiter
  clock: Clock
  metrics: Metrics
  /** The main listener's app (the public API, its docs, health). */
  app: FastifyInstance
  /**
   * The admin listener's app (admin API, /metrics), built on first call from the same dependencies
   * and calling the main app's key service (whose last-used batch the usage numbers include).
   */
  admin(): Promise<FastifyInstance>
  /** Closes the apps (their batches write to storage), then the limiter, then storage. */
  close(): Promise<void>
}

/**
 * Builds the service the server runs, from `config` and whatever `overrides` replace: storage
 * (opened and migrated), limiter, metrics and the main app, ready. What it is given it closes too,
 * once it has returned; a build that fails closes only what it opened itself.
 */
export async function buildService(config: Config, overrides: ServiceOverrides = {}): Promise<Service> {
  const clock = overrides.clock ?? systemClock
  const metrics = overrides.metrics ?? new Metrics({ defaultMetrics: false })
  const { logger, drain } = overrides
  const opened: Array<{ close(): Promise<unknown> }> = []
  try {
    const storage = overrides.storage ?? (await openStorage(config, clock))
    if (overrides.storage === undefined) opened.push(storage)
    const limiter = overrides.limiter ?? (await createLimiter(config, clock, metrics, limiterLog(logger)))
    if (overrides.limiter === undefined) opened.push(limiter)
    const deps: AppDependencies = { config, storage, limiter, clock, metrics, logger, drain }
    const app = await buildApp(deps)
    opened.push(app)
    await app.ready()

    let admin: Promise<FastifyInstance> | undefined
    const buildAdmin = async () => {
      const adminApp = await buildApp({
        ...deps,
        listener: 'admin',
        keyAdmin: app.keyService,
        usagePending: app.usageRecorder,
        keyChanges: app.keyResolver,
        readiness: app.readiness,
      })
      try {
        await adminApp.ready()
      } catch (error) {
        await adminApp.close().catch(() => {})
        throw error
      }
      return adminApp
    }
    return {
      config,
      storage,
      limiter,
      clock,
      metrics,
      app,
      admin: () => {
        admin ??= buildAdmin()
        return admin
      },
      close: async () => {
        const adminApp = await admin?.catch(() => undefined)
        await Promise.all([app.close(), adminApp?.close()])
        await limiter.close()
        await storage.close()
      },
    }
  } catch (error) {
    for (const resource of opened.reverse()) await resource.close().catch(() => {})
    throw error
  }
}

/** The limiter logs (Redis outages, its state file) through the service's logger when it is one, else nowhere. */
function limiterLog(logger: AppDependencies['logger']): FastifyBaseLogger {
  const isInstance = logger !== undefined && typeof (logger as { info?: unknown }).info === 'function'
  return isInstance ? (logger as FastifyBaseLogger) : pino({ enabled: false })
}
