import type { FastifyPluginAsync } from 'fastify'
import type { RateLimiter } from '../limits/limiter.js'
import type { Storage } from '../storage/storage.js'
import type { Metrics } from './metrics.js'

export interface OpsRoutesOptions {
  storage: Storage
  limiter: RateLimiter
  metrics: Metrics
  /** When the limiter fails closed, the service is not ready without it. */
  limiterRequired: boolean
}

const hidden = { hide: true }

/** Health, readiness and metrics, outside /v1, with no key and no rate limit. */
export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, { storage, limiter, metrics, limiterRequired }) => {
  app.get('/healthz', { config: { public: true }, schema: hidden }, async () => ({ status: 'ok' }))

  app.get('/readyz', { config: { public: true }, schema: hidden }, async (_request, reply) => {
    const check = async (name: string, ping: () => Promise<void>) => {
      try {
        await withTimeout(ping(), 1000)
        metrics.dependencyUp.set({ dependency: name }, 1)
        return 'up'
      } catch {
        metrics.dependencyUp.set({ dependency: name }, 0)
        return 'down'
      }
    }
    const [database, rateLimiter] = await Promise.all([
      check(storage.kind, () => storage.ping()),
      check(limiter.kind, () => limiter.ping()),
    ])
    // A limiter that fails open still serves (on a local fallback): reported, but still ready.
    const ready = database === 'up' && (rateLimiter === 'up' || !limiterRequired)
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unavailable',
      checks: { database: { engine: storage.kind, status: database }, rateLimiter: { store: limiter.kind, status: rateLimiter } },
    })
  })

  app.get('/metrics', { config: { public: true }, schema: hidden }, async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType)
    return metrics.registry.metrics()
  })
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
