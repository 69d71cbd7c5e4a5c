import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify'
import { adminApi } from './admin/index.js'
import { registerPublicApi } from './api/index.js'
import { AddressRefusals } from './auth/address-refusals.js'
import { apiKeyCredential } from './auth/api-key-credential.js'
import { createGuard } from './auth/guard.js'
import type { Config } from './config/config.js'
import { CustomerService } from './customers/customer-service.js'
import { accessLog, lazyRequestLogger, REQUEST_ID_LABEL } from './http/access-log.js'
import { clientErrorHandler, trackResponses } from './http/client-errors.js'
import { commonHeaders } from './http/common-headers.js'
import { countDeferred, EntityTags } from './http/conditional-reads.js'
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
import { IdempotencySweep } from './idempotency/sweep.js'
import type { KeyAdministration } from './keys/administration.js'
import { KeyResolver } from './keys/key-resolver.js'
import { KeyService } from './keys/key-service.js'
import { LastUsedRecorder } from './keys/last-used.js'
import type { RateLimiter } from './limits/limiter.js'
import { infoLines } from './ops/logger.js'
import { Metrics } from './ops/metrics.js'
import { Readiness } from './ops/readiness.js'
import { opsRoutes } from './ops/routes.js'
import { OrderExpiry } from './orders/expiry.js'
import { reportSweep } from './secret-scanning/reports.js'
import { BODY_LIMIT_BYTES } from './shared/body-limit.js'
import { type Clock, systemClock } from './shared/clock.js'
import type { Drain } from './shared/drain.js'
import { ErrorBody } from './shared/error-body.js'
import type { Storage } from './storage/storage.js'
import { countUsage } from './usage/count-hook.js'
import { UsageRecorder } from './usage/recorder.js'
import { UsageRetention } from './usage/retention.js'
import { UsageHistory } from './usage/usage-history.js'

export interface AppDependencies {
  config: Config
  storage: Storage
  limiter: RateLimiter
  clock?: Clock
  metrics?: Metrics
  /** Set by the server on a stop signal: /readyz answers 503 while it drains. */
  drain?: Drain
  /** A pino logger or Fastify logger options; off when omitted. */
  logger?: FastifyServerOptions['loggerInstance'] | FastifyServerOptions['logger']
  /** The key service behind the admin API (/admin/v1); by default this app's own. */
  keyAdmin?: KeyAdministration
  /** The counts usage history has not stored yet, merged into the admin API's answers; by default this app's own. */
  usagePending?: Pick<UsageRecorder, 'pendingBuckets' | 'pendingTotals'>
  /**
   * The dependency checks of /readyz; by default this app's own. The admin listener shares the main
   * one's, so that probes of both cost one check per interval.
   */
  readiness?: Readiness
  /**
   * Where the admin listener learns of revoked admin tokens: the main app's key resolver, whose
   * poll of the change log (and PostgreSQL NOTIFY) tells of them. Without one, the app polls itself.
   */
  keyChanges?: KeyResolver
  /**
   * 'main' (default): the public API, its docs, / and health. 'admin': the admin API, /metrics and
   * health, for the admin listener (ADMIN_PORT). Neither serves the other's paths in any spelling:
   * they are simply not routes of that app.
   */
  listener?: 'main' | 'admin'
}

const MAX_PARAM_LENGTH = 100
/** How often old usage-history rows are deleted (each run in batches; see usage/retention.ts). */
const USAGE_RETENTION_INTERVAL_MS = 60_000

/** How often Node sweeps for connections past headersTimeout/requestTimeout: 1 s, or half the headers timeout if shorter. */
const connectionsCheckingInterval = (headersTimeoutMs: number) => Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 2)))

/**
 * Builds the whole HTTP service from injected dependencies; the caller owns storage and limiter.
 * A request passes the admission steps (headers, shutdown, deprecation notice, authentication and
 * limits), then the routing steps (Host, 404/405, sunset), all before its body is read; then
 * Fastify's validation and the route's handler. Every error is answered by one function.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, storage, limiter } = deps
  const clock = deps.clock ?? systemClock
  const metrics = deps.metrics ?? new Metrics({ defaultMetrics: false })
  const loggerOptions =
    deps.logger && typeof (deps.logger as { info?: unknown }).info === 'function'
      ? { loggerInstance: deps.logger as FastifyServerOptions['loggerInstance'] }
      : { logger: (deps.logger as FastifyServerOptions['logger']) ?? false }
  // '' makes every link the service builds relative (RFC 8288), right for a client on any address.
  const linkBase = config.publicBaseUrl ?? ''
  const listener = deps.listener ?? 'main'
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
    schemaController: strictSchemaController,
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

  const keys = new KeyResolver(storage.keys, {
    env: config.env,
    refreshMs: config.keyRefreshMs,
    onError: (error) => app.log.warn({ err: error }, 'key change poll failed'),
  })
  const lastUsed = new LastUsedRecorder(storage.keys, {
    flushMs: config.lastUsedFlushMs,
    onError: (error) => app.log.warn({ err: error }, 'writing last-used times failed; kept for the next flush'),
  })
  const usage = new UsageRecorder(storage.usage, {
    flushMs: config.usageFlushMs,
    onError: (error) => app.log.warn({ err: error }, 'writing usage history failed; counts kept for the next flush'),
    onDropped: () => metrics.usageDropped.inc(),
  })
  const usageRetention = new UsageRetention(storage.usage, {
    keep: { minute: config.usageMinuteRetentionMs, hour: config.usageHourRetentionMs },
    intervalMs: USAGE_RETENTION_INTERVAL_MS,
    clock,
    onError: (error) => app.log.warn({ err: error }, 'deleting old usage history failed; retried by the next run'),
  })
  const idempotencySweep = new IdempotencySweep(storage.pets, clock, (error) =>
    app.log.warn({ err: error }, 'idempotency record sweep failed'),
  )
  const scanReportSweep = reportSweep(storage.scanReports, clock, (error) =>
    app.log.warn({ err: error }, 'secret scanning report sweep failed'),
  )
  const orderExpiry = new OrderExpiry(storage.orders, {
    intervalMs: config.orderSweepMs,
    onError: (error) => app.log.warn({ err: error }, 'expiring orders failed; retried by the next run'),
  })
  // The one key service of this process: the admin API calls it (the CLI builds its own).
  const keyService = new KeyService({
    keys: storage.keys,
    audit: storage.audit,
    limiter,
    env: config.env,
    clock,
    pendingLastUse: (id) => lastUsed.pendingFor(id),
    // A change made here stops the key here at once; other processes learn of it from the change log.
    cache: keys,
    customers: storage.customers,
  })
  const usageHistory = new UsageHistory({
    usage: storage.usage,
    keys: storage.keys,
    audit: storage.audit,
    clock,
    pending: deps.usagePending ?? usage,
  })
  const customerService = new CustomerService({
    customers: storage.customers,
    audit: storage.audit,
    usage: storage.usage,
    history: usageHistory,
    clock,
    cache: keys,
  })
  // The main app's resolver tells the admin listener's app of revoked admin tokens; an admin app
  // built alone (tests) starts its own.
  const keyChanges = deps.keyChanges ?? keys
  const admin = main
    ? undefined
    : adminApi({
        admin: deps.keyAdmin ?? keyService,
        usage: usageHistory,
        adminTokens: storage.adminTokens,
        keyChanges,
        orders: storage.orders,
        audit: storage.audit,
        customers: customerService,
        now: () => clock.now(),
      })
  const readiness =
    deps.readiness ??
    new Readiness({
      storage,
      limiter,
      metrics,
      limiterRequired: config.redisUrl !== undefined && config.redisFailurePolicy === 'closed',
    })

  routes.collect(app)
  app.addHook('onRoute', closeQueryStrings)
  app.addSchema(ErrorBody)
  registerJsonBody(app)
  registerErrorHandling(app, (request) => unroutedError(routes, request))
  trackResponses(app.server)
  // An unknown Expect value is ignored (RFC 9110 allows it) rather than Node's empty 417.
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res))

  if (main || keyChanges === keys) {
    app.addHook('onReady', async () => {
      await keys.start()
    })
    app.addHook('onClose', async () => {
      await keys.stop()
    })
  }
  if (main) {
    app.addHook('onReady', async () => {
      lastUsed.start()
      usage.start()
      usageRetention.start()
      idempotencySweep.start()
      scanReportSweep.start()
      orderExpiry.start()
    })
    app.addHook('onClose', async () => {
      // Before the caller closes storage: the last batch of last-used times is written.
      await lastUsed.stop()
      await Promise.all([usage.stop(), usageRetention.stop(), orderExpiry.stop(), idempotencySweep.stop(), scanReportSweep.stop()])
    })
  }
  app.decorate('keyResolver', keys)
  app.decorate('lastUsed', lastUsed)
  app.decorate('keyService', keyService)
  app.decorate('usageRecorder', usage)
  app.decorate('orderExpiry', orderExpiry)
  app.decorate('metrics', metrics)
  app.decorate('readiness', readiness)

  if (config.corsOrigins !== undefined && main) await registerCors(app, config.corsOrigins)
  const deprecation = registerDeprecation(app, clock, linkBase)
  app.decorateRequest('apiKey', null)
  app.decorateRequest('usageKeyId', null)
  app.decorateRequest('limitOutcome', null)
  app.decorateRequest('deferredCount', null)
  app.decorateRequest('quotaRead', null)
  app.decorate('admission', [
    commonHeaders,
    refuseWhileClosing(app),
    deprecation.announce,
    createGuard({
      limiter,
      metrics,
      credentials: { apiKey: apiKeyCredential({ keys, clock, lastUsed }), admin: admin?.credential },
    }),
  ])
  const routing: Step[] = [requireHost, answerUnrouted(routes), deprecation.enforceSunset]
  const steps = [...app.admission, ...routing]
  app.addHook('onRequest', (request, reply, done) => runSteps(steps, request, reply, done))

  if (main) app.addHook('onSend', countDeferred)
  if (main) app.addHook('onResponse', countUsage(usage, clock))
  app.addHook('onResponse', accessLog(app.log, metrics, typeof deps.logger === 'object' ? infoLines.get(deps.logger) : undefined))

  if (main)
    await registerPublicApi(app, {
      config,
      pets: storage.pets,
      orders: storage.orders,
      clock,
      linkBase,
      // One database, one secret: every instance on it tags the same answer alike.
      entityTags: new EntityTags(storage.serviceSecret),
      scanning: { admin: keyService, reports: storage.scanReports, refusals: new AddressRefusals(limiter, metrics) },
    })
  await app.register(opsRoutes, {
    readiness,
    metrics,
    reference: { docs: DOCS_PATH, openapi: OPENAPI_PATH },
    drain: deps.drain,
    listener,
  })
  await admin?.register(app)
  return app
}

declare module 'fastify' {
  interface FastifyInstance {
    keyResolver: KeyResolver
    lastUsed: LastUsedRecorder
    keyService: KeyService
    usageRecorder: UsageRecorder
    orderExpiry: OrderExpiry
    metrics: Metrics
    readiness: Readiness
  }
}
