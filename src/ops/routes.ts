import type { FastifyPluginAsync } from 'fastify'
import { type Static, Type } from 'typebox'
import type { Drain } from '../shared/drain.js'
import { SERVICE_VERSION } from '../shared/version.js'
import type { Metrics } from './metrics.js'
import type { Readiness } from './readiness.js'

export interface OpsRoutesOptions {
  /** The dependency checks of /readyz (cached: see READINESS_MAX_AGE_MS). */
  readiness: Readiness
  metrics: Metrics
  /** Where `GET /` says the API reference (`docs`) and the OpenAPI document (`openapi`) are. */
  reference: { docs: string; openapi: string }
  /** Draining before a stop: not ready, whatever the dependencies say. */
  drain?: Drain | undefined
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
export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, { readiness, metrics, reference, drain, listener }) => {
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
    const { ready, body } = await readiness.check()
    return reply.code(ready ? 200 : 503).send(body)
  })

  if (listener === 'admin') {
    app.get('/metrics', { config: { public: true }, schema: hidden }, async (_request, reply) => {
      reply.header('content-type', metrics.registry.contentType)
      return metrics.registry.metrics()
    })
  }
}
