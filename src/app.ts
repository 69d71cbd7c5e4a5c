import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, LogController } from 'fastify'
import { adminApi } from './admin/index.js'
import { registerPublicApi } from './api/index.js'
import { addressIdentity } from './auth/address-identity.js'
import { AddressRefusals } from './auth/address-refusals.js'
import { presentedOf, registerAdmission } from './auth/admission.js'
import { apiKeyCredential } from './auth/api-key-credential.js'
import { createGuard } from './auth/guard.js'
import type { Domain } from './domain.js'
import { accessLog, lazyRequestLogger, REQUEST_ID_LABEL } from './http/access-log.js'
import { clientAddress } from './http/client-address.js'
import { clientErrorHandler, trackResponses } from './http/client-errors.js'
import { commonHeaders } from './http/common-headers.js'
import { DeferredCompilation } from './http/compile-on-first-use.js'
import { EntityTags } from './http/conditional-reads.js'
import { registerCors } from './http/cors.js'
import { registerDeprecation } from './http/deprecation.js'
import { DOCS_PATH, OPENAPI_PATH } from './http/doc-paths.js'
import { registerErrorHandling } from './http/error-handler.js'
import { frameworkErrorHandler } from './http/framework-errors.js'
import { registerJsonBody } from './http/json-body.js'
import { runSteps, type Step } from './http/pipeline.js'
import { requestId } from './http/request-id.js'
import { answerUnrouted, requireHost, unroutedError } from './http/route-fallback.js'
import { RouteTable } from './http/route-settings.js'
import { refuseWhileClosing } from './http/shutdown.js'
import { closeQueryStrings, strictSchemaController } from './http/validation.js'
import { limitEventsHook } from './keys/limit-events.js'
import { infoLines } from './ops/logger.js'
import { opsRoutes } from './ops/routes.js'
import { BODY_LIMIT_BYTES } from './shared/body-limit.js'
import type { Drain } from './shared/drain.js'
import { ErrorBody } from './shared/error-body.js'
import { countUsage } from './usage/count-hook.js'

export interface AppOptions {
  /**
   * 'main' (default): the public API, its docs, / and health. 'admin': the admin API, /metrics and
   * health, for the admin listener (ADMIN_PORT). Neither serves the other's paths in any spelling:
   * they are simply not routes of that app.
   */
  listener?: 'main' | 'admin'
  /** Set by the server on a stop signal: /readyz answers 503 while it drains. */
  drain?: Drain
  /** Collects the validators and serializers compiled on first use (a test compiles them all). */
  compilation?: DeferredCompilation
}

const MAX_PARAM_LENGTH = 100

/** How often Node sweeps for connections past headersTimeout/requestTimeout: 1 s, or half the headers timeout if shorter. */
const connectionsCheckingInterval = (headersTimeoutMs: number) => Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 2)))

/**
 * One listener's HTTP app, a thin adapter over the domain (domain.ts): it reads the caches, the
 * services and the limiter from it and builds nothing of its own that another listener or a job
 * could need; the domain's owner (service.ts) runs its jobs and closes it.
 * A request passes the admission steps (headers, shutdown, deprecation notice, authentication and
 * limits), then the routing steps (Host, 404/405, sunset), all before its body is read; then
 * Fastify's validation and the route's handler. Every error is answered by one function.
 */
export async function buildApp(domain: Domain, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config, storage, limiter, clock, metrics } = domain
  const keys = domain.keyResolver
  const { lastUsed, usage } = domain.recorders
  const keyService = domain.services.keys
  const loggerOptions = domain.logger === undefined ? { logger: false } : { loggerInstance: domain.logger }
  // '' makes every link the service builds relative (RFC 8288), right for a client on any address.
  const linkBase = config.publicBaseUrl ?? ''
  const listener = options.listener ?? 'main'
  const main = listener === 'main'

  const routes = new RouteTable()
  const app = Fastify({
    ...loggerOptions,
    // One access-log line per request, written in onResponse below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: REQUEST_ID_LABEL }),
    childLoggerFactory: lazyRequestLogger,
    genReqId: requestId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // TRUST_PROXY names the main listener's proxies. The admin listener trusts none: otherwise any
    // local process could pick its client address per request and escape the limit on token guessing.
    trustProxy: main ? config.trustProxy : false,
    schemaController: strictSchemaController(options.compilation ?? new DeferredCompilation()),
    return503OnClosing: false, // our own 503 while closing, in the Error shape (http/shutdown.ts)
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // server.timeout: a socket that moves no byte either way for a whole request timeout is dead
    // (a client that stopped reading its responses, or left a socket half-open after an error answer).
    connectionTimeout: config.requestTimeoutMs,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler(routes, MAX_PARAM_LENGTH),
    http: {
      maxHeaderSize: config.maxHeaderBytes,
      requireHostHeader: false, // answered in the Error shape by requireHost
      // Node checks headersTimeout/requestTimeout only this often (default 30 s): keep it well
      // under the timeouts so a slow client is cut off close to the configured bound (docs/limits.md).
      connectionsCheckingInterval: connectionsCheckingInterval(config.headersTimeoutMs),
    },
    routerOptions: { ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: MAX_PARAM_LENGTH },
  }).withTypeProvider<TypeBoxTypeProvider>()

  const admin = main
    ? undefined
    : adminApi({
        admin: keyService,
        usage: domain.services.usageHistory,
        adminTokens: domain.services.adminTokens,
        tokens: domain.adminTokenResolver,
        orders: domain.services.operatorOrders,
        auditLog: domain.services.auditLog,
        customers: domain.services.customers,
        webhookEndpoints: domain.services.webhookEndpoints,
        webhookDeliveries: domain.services.webhookDeliveries,
        eventLog: domain.services.eventLog,
        now: () => clock.now(),
      })

  routes.collect(app)
  app.addHook('onRoute', closeQueryStrings)
  app.addSchema(ErrorBody)
  registerJsonBody(app)
  registerErrorHandling(app, (request) => unroutedError(routes, request))
  trackResponses(app.server)
  // An unknown Expect value is ignored (RFC 9110 allows it) rather than Node's empty 417.
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res))

  if (config.corsOrigins !== undefined && main) await registerCors(app, config.corsOrigins)
  const deprecation = registerDeprecation(app, clock, linkBase)
  registerAdmission(app)
  const guard = createGuard({
    limiter,
    metrics,
    credentials: { apiKey: apiKeyCredential({ keys, clock, lastUsed }), admin: admin?.credential },
  })
  app.decorate('admissionSteps', [commonHeaders, refuseWhileClosing(app), deprecation.announce, guard.admit])
  const routing: Step[] = [requireHost, answerUnrouted(routes), deprecation.enforceSunset]
  const steps = [...app.admissionSteps, ...routing]
  app.addHook('onRequest', (request, reply, done) => runSteps(steps, request, reply, done))

  if (main) app.addHook('onSend', guard.settle)
  if (main) app.addHook('onResponse', countUsage(usage, clock))
  if (main)
    app.addHook(
      'onResponse',
      limitEventsHook(domain.limitEvents, (request) => addressIdentity(clientAddress(request))),
    )
  const writeLine = domain.logger === undefined ? undefined : infoLines.get(domain.logger)
  app.addHook('onResponse', accessLog(app.log, metrics, writeLine, presentedOf))

  if (main)
    await registerPublicApi(app, {
      config,
      pets: storage.pets,
      orders: storage.orders,
      events: storage.events,
      clock,
      linkBase,
      // One database, one secret: every instance on it tags the same answer alike.
      entityTags: new EntityTags(storage.serviceSecret),
      scanning: { admin: keyService, reports: storage.scanReports, refusals: new AddressRefusals(limiter, metrics) },
    })
  await app.register(opsRoutes, {
    readiness: domain.readiness,
    metrics,
    reference: { docs: DOCS_PATH, openapi: OPENAPI_PATH },
    drain: options.drain,
    listener,
  })
  await admin?.register(app)
  return app
}
