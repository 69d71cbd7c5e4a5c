import type { FastifyPluginAsync } from 'fastify'
import { type Static, Type } from 'typebox'
import type { Drain } from '../shared/drain.js'
import { SERVICE_VERSION } from '../version.js'
import type { Metrics } from './metrics.js'

/** What /readyz checks: the store or the limiter, by its kind (sqlite, redis, …). */
export interface Dependency {
  readonly kind: string
  /** Rejects when the dependency cannot answer. */
  ping(): Promise<void>
}

export interface OpsRoutesOptions {
  storage: Dependency
  limiter: Dependency
  metrics: Metrics
  /** Where `GET /` says the API reference (`docs`) and the OpenAPI document (`openapi`) are. */
  reference: { docs: string; openapi: string }
  /** Draining before a stop: not ready, whatever the dependencies say. */
  drain?: Drain | undefined
  /** When the limiter fails closed, the service is not ready without it. */
  limiterRequired: boolean
  /**
   * Which listener these are for. 'main': `GET /` (where the docs are), /healthz and /readyz.
   * 'admin': /healthz, /readyz and /metrics, which is for operators only (series by route and
   * status, dependency state) and so never on the main listener.
   */
  listener: 'main' | 'admin'
}

const hidden = { hide: true }

/** What `GET /` answers: where a newcomer finds the reference. Outside /v1, so not in the OpenAPI document. */
const ServiceIndex = Type.Object(
  {
    name: Type.String(),
    version: Type.String({ description: "The API version (the OpenAPI document's info.version)." }),
    serviceVersion: Type.String({ description: "This server's release (package.json's version; see CHANGELOG.md)." }),
    docs: Type.String({ description: 'Path of the interactive API reference (Swagger UI).' }),
    openapi: Type.String({ description: 'Path of the OpenAPI 3.1 document.' }),
  },
  { additionalProperties: false },
)

/** Health, readiness and metrics, outside /v1, with no key and no rate limit. */
export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (
  app,
  { storage, limiter, metrics, reference, drain, limiterRequired, listener },
) => {
  if (listener === 'main') {
    let serviceIndex: Static<typeof ServiceIndex> | undefined
    app.get('/', { config: { public: true }, schema: { ...hidden, response: { 200: ServiceIndex } } }, async () => {
      serviceIndex ??= {
        name: 'Animal Store API',
        version: app.swagger().info.version,
        serviceVersion: SERVICE_VERSION,
        docs: reference.docs,
        openapi: reference.openapi,
      }
      return serviceIndex
    })
  }

  app.get('/healthz', { config: { public: true }, schema: hidden }, async () => ({ status: 'ok' }))

  app.get('/readyz', { config: { public: true }, schema: hidden }, async (_request, reply) => {
    // Stopping: the balancer must take this instance out now, while it still serves what it gets.
    if (drain?.draining) return reply.code(503).send({ status: 'draining' })
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
    // A limiter that fails open still serves (on a local fallback, limits per instance): still
    // ready (200, so that a load balancer does not pull every instance when Redis dies), but
    // "degraded". Fail-closed, requests are refused without it: not ready.
    const ready = database === 'up' && (rateLimiter === 'up' || !limiterRequired)
    return reply.code(ready ? 200 : 503).send({
      status: !ready ? 'unavailable' : rateLimiter === 'up' ? 'ready' : 'degraded',
      checks: { database: { engine: storage.kind, status: database }, rateLimiter: { store: limiter.kind, status: rateLimiter } },
    })
  })

  if (listener === 'admin') {
    app.get('/metrics', { config: { public: true }, schema: hidden }, async (_request, reply) => {
      reply.header('content-type', metrics.registry.contentType)
      return metrics.registry.metrics()
    })
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
