import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { systemClock, type Clock } from './clock.js'
import type { Config } from './config.js'
import { applyCommonHeaders, redactKeys } from './http/common-headers.js'
import { deprecationHeaders } from './http/deprecation.js'
import { clientErrorHandler, registerErrorHandling } from './http/error-handler.js'
import { ApiError, ErrorBody } from './http/errors.js'
import { frameworkErrorHandler } from './http/framework-errors.js'
import { registerGuard, type Guard } from './http/guard.js'
import { parseJsonBody } from './http/json-body.js'
import { registerOpenApi } from './http/openapi.js'
import { requestId } from './http/request-id.js'
import { registerRouteFallback } from './http/route-fallback.js'
import { strictSchemaController } from './http/validation.js'
import { KeyResolver } from './keys/key-resolver.js'
import type { RateLimiter } from './limits/limiter.js'
import { Metrics } from './ops/metrics.js'
import { opsRoutes } from './ops/routes.js'
import { petRoutes } from './pets/routes.js'
import { NewPetSchema, PetSchema, PetStatusSchema } from './pets/schemas.js'
import type { Storage } from './storage/storage.js'

export interface AppDependencies {
  config: Config
  storage: Storage
  limiter: RateLimiter
  clock?: Clock
  metrics?: Metrics
  /** A pino logger or Fastify logger options; off when omitted. */
  logger?: FastifyServerOptions['loggerInstance'] | FastifyServerOptions['logger']
}

export const BODY_LIMIT = 16 * 1024

/** How often Node sweeps for connections past headersTimeout/requestTimeout: 1 s, or half the headers timeout if shorter. */
const connectionsCheckingInterval = (headersTimeoutMs: number) => Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 2)))

const PUBLIC_PREFIXES = ['/docs', '/v1/openapi.json', '/healthz', '/readyz', '/metrics']
const isPublicPath = (url: string) => PUBLIC_PREFIXES.some((p) => url === p || url.startsWith(p + '/') || url.startsWith(p + '?'))

/** Builds the whole HTTP service from injected dependencies; the caller owns storage and limiter. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, storage, limiter } = deps
  const clock = deps.clock ?? systemClock
  const metrics = deps.metrics ?? new Metrics({ defaultMetrics: false })
  const loggerOptions =
    deps.logger && typeof (deps.logger as { info?: unknown }).info === 'function'
      ? { loggerInstance: deps.logger as FastifyServerOptions['loggerInstance'] }
      : { logger: (deps.logger as FastifyServerOptions['logger']) ?? false }

  const deprecation = deprecationHeaders(config.publicBaseUrl)
  let guard: Guard | undefined
  const app = Fastify({
    ...loggerOptions,
    // One access-log line per request, written in onResponse below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: requestId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy, // false, or the proxies' addresses/CIDRs
    schemaController: strictSchemaController,
    return503OnClosing: false, // our own 503 while closing, in the Error shape (onRequest below)
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // server.timeout: a socket that moves no byte either way for a whole request timeout is dead
    // (a client that stopped reading its responses, or left a socket half-open after an error answer).
    connectionTimeout: config.requestTimeoutMs,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler(() => guard!, deprecation),
    http: {
      maxHeaderSize: config.maxHeaderBytes,
      requireHostHeader: false, // answered in the Error shape by registerRouteFallback
      // Node checks headersTimeout/requestTimeout only this often (default 30 s): keep it well
      // under the timeouts so a slow client is cut off close to the configured bound (docs/limits.md).
      connectionsCheckingInterval: connectionsCheckingInterval(config.headersTimeoutMs),
    } as never,
    routerOptions: { ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 100 },
  }) as unknown as FastifyInstance

  app.addSchema(PetStatusSchema)
  app.addSchema(NewPetSchema)
  app.addSchema(PetSchema)
  app.addSchema(ErrorBody)

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = /;\s*charset=("?)([^";]+)\1/i.exec(request.headers['content-type'] ?? '')?.[2]
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
      done(Object.assign(new Error('charset'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }), undefined)
      return
    }
    try {
      done(null, parseJsonBody(body as Buffer))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  registerErrorHandling(app)

  const keys = new KeyResolver(storage.keys, {
    env: config.env,
    refreshMs: config.keyRefreshMs,
    onError: (error) => app.log.warn({ err: error }, 'key revocation poll failed'),
  })
  app.addHook('onReady', () => keys.start())
  app.addHook('onClose', async () => keys.stop())
  app.decorate('keyResolver', keys)

  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })
  // Callback-style hooks: these run on every request, and skip a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    applyCommonHeaders(request, reply)
    // Every answer of getPet, its 401 and 429 included, says it is deprecated.
    if (request.routeOptions.url === '/v1/pets/:petId') reply.headers(deprecation)
    // Requests that arrive while draining get a 503 in the Error shape; Fastify already sets Connection: close.
    if (closing) done(new ApiError('service_unavailable', 'The server is shutting down; retry', { 'retry-after': 1 }))
    else done()
  })
  guard = registerGuard(app, { keys, limiter, metrics, isPublicPath })
  registerRouteFallback(app)
  // An unknown Expect value is ignored (RFC 9110 allows it) rather than Node's empty 417.
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res))

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const status = reply.statusCode
    const ms = reply.elapsedTime
    metrics.observeRequest(request.method, route, status, ms / 1000)
    request.log.info(
      { method: request.method, url: redactKeys(request.url), status, ms: Math.round(ms * 100) / 100, keyId: request.apiKey?.id },
      'request',
    )
    done()
  })

  await registerOpenApi(app, config)

  await app.register(petRoutes, { prefix: '/v1', pets: storage.pets, clock, publicBaseUrl: config.publicBaseUrl })
  await app.register(opsRoutes, {
    storage,
    limiter,
    metrics,
    limiterRequired: config.redisUrl !== undefined && config.redisFailurePolicy === 'closed',
  })

  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger())

  app.decorate('metrics', metrics)
  return app
}

declare module 'fastify' {
  interface FastifyInstance {
    keyResolver: KeyResolver
    metrics: Metrics
  }
}
