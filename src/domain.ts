import type { FastifyBaseLogger } from 'fastify'
import { AdminTokenService } from './admin-tokens/admin-token-service.js'
import { AdminTokenResolver } from './admin-tokens/admin-tokens.js'
import { AuditLogService } from './changes/audit-log-service.js'
import { ChangeRecorder } from './changes/change-recorder.js'
import { EventLogService } from './changes/event-log-service.js'
import type { Config } from './config/config.js'
import { CustomerService } from './customers/customer-service.js'
import { type Jobs, serverJobs } from './daemon/jobs.js'
import { KeyResolver } from './keys/key-resolver.js'
import { KeyService } from './keys/key-service.js'
import { LastUsedRecorder } from './keys/last-used.js'
import { LimitEvents } from './keys/limit-events.js'
import { createLimiter } from './limits/index.js'
import type { RateLimiter } from './limits/limiter.js'
import { jobWarnings } from './ops/job-warnings.js'
import type { Metrics } from './ops/metrics.js'
import { Readiness } from './ops/readiness.js'
import { OperatorOrders } from './orders/operator-orders.js'
import { type Clock, systemClock } from './shared/clock.js'
import { openStorage } from './storage/index.js'
import type { Storage } from './storage/storage.js'
import { UsageRecorder } from './usage/recorder.js'
import { UsageHistory } from './usage/usage-history.js'
import { WebhookDeliveryService } from './webhooks/delivery-service.js'
import { type HostResolver, systemResolver } from './webhooks/destination.js'
import { WebhookEndpointService } from './webhooks/endpoint-service.js'

/** The use cases the adapters call: the admin API and the CLI the same ones. */
export interface Services {
  keys: KeyService
  customers: CustomerService
  adminTokens: AdminTokenService
  usageHistory: UsageHistory
  /** Reading the audit log. */
  auditLog: AuditLogService
  /** Every caller's orders, as operators see and cancel them. */
  operatorOrders: OperatorOrders
  /** Where events are sent: webhook endpoints and their secrets. */
  webhookEndpoints: WebhookEndpointService
  /** Reading every caller's events. */
  eventLog: EventLogService
  /** The webhook delivery log: listing, retrying, replaying. */
  webhookDeliveries: WebhookDeliveryService
}

/** What every domain has, the CLI's too: the store, the caches, the recorders and the services over them. */
export interface DomainCore {
  config: Config
  storage: Storage
  clock: Clock
  /**
   * The process's one cache of API keys: the main listener serves from it, and every service that
   * changes a key or a customer here drops what it changed from it at once (others poll the change log).
   */
  keyResolver: KeyResolver
  /** The one cache of admin tokens (the admin listener's credential), told of revocations by the key-change poll. */
  adminTokenResolver: AdminTokenResolver
  /** What requests leave to be written in batches: keys' last use, usage history. */
  recorders: { lastUsed: LastUsedRecorder; usage: UsageRecorder }
  /** The one maker of audit entries, which every service uses (changes/). */
  changes: ChangeRecorder
  services: Services
}

/** The domain of a server process: the core, the limiter, what observes it, and the background jobs. */
export interface Domain extends DomainCore {
  limiter: RateLimiter
  metrics: Metrics
  /** The process's logger (the apps' too); none: nothing is logged. */
  logger: FastifyBaseLogger | undefined
  /** The dependency checks of /readyz, shared by both listeners: one check per interval for both. */
  readiness: Readiness
  /** The events the limiter's answers tell (usage thresholds, bans), written after each answer. */
  limitEvents: LimitEvents
  /** Built here, started by the owner of the process (service.ts) once its apps are ready. */
  jobs: Jobs
  /** The jobs stopped (their last batches written), then the limiter closed, then storage: given or not. */
  close(): Promise<void>
  /** For a build that fails after this one: the jobs stopped, and only what buildDomain opened itself closed. */
  discard(): Promise<void>
}

/** What a command works on: no limiter of its own (a command that reads counters gives one), no jobs. */
export interface CommandDomain extends DomainCore {
  /** Closes the storage it opened. */
  close(): Promise<void>
}

export interface DomainOverrides {
  /** Each opened from the config when not given; a test gives its in-memory store, the server its locked one. */
  storage?: Storage
  limiter?: RateLimiter
  clock?: Clock
  metrics?: Metrics
  logger?: FastifyBaseLogger
  /** How host names are resolved to judge a webhook endpoint's URL (default: the system's resolver); a test gives its own. */
  resolveHost?: HostResolver
}

interface CoreParts {
  storage: Storage
  clock: Clock
  /** Only what the key service reads of it: a key's counters, counting nothing. */
  limiter: Pick<RateLimiter, 'peek'>
  warn: (message: string) => (error: unknown) => void
  onUsageDropped?: () => void
  resolveHost?: HostResolver
}

/** The core of every domain, each part built once. */
function buildCore(config: Config, { storage, clock, limiter, warn, onUsageDropped, resolveHost }: CoreParts): DomainCore {
  const keyResolver = new KeyResolver(storage.keys, {
    env: config.env,
    refreshMs: config.keyRefreshMs,
    onError: warn('key change poll failed'),
  })
  const adminTokenResolver = new AdminTokenResolver(storage.adminTokens, keyResolver.known)
  keyResolver.follow(adminTokenResolver)
  const lastUsed = new LastUsedRecorder(storage.keys, {
    flushMs: config.lastUsedFlushMs,
    onError: warn('writing last-used times failed; kept for the next flush'),
  })
  const usage = new UsageRecorder(storage.usage, {
    flushMs: config.usageFlushMs,
    onError: warn('writing usage history failed; counts kept for the next flush'),
    onDropped: onUsageDropped,
  })
  const changes = new ChangeRecorder(storage.audit, clock)
  const keys = new KeyService({
    keys: storage.keys,
    recorder: changes,
    limiter,
    env: config.env,
    clock,
    pendingLastUse: (id) => lastUsed.pendingFor(id),
    cache: keyResolver,
    customers: storage.customers,
  })
  const usageHistory = new UsageHistory({ usage: storage.usage, keys: storage.keys, recorder: changes, clock, pending: usage })
  // The same cache as the key service's: a plan change holds at this process's next request.
  const customers = new CustomerService({
    customers: storage.customers,
    recorder: changes,
    usage: storage.usage,
    history: usageHistory,
    clock,
    cache: keyResolver,
  })
  const adminTokens = new AdminTokenService(storage.adminTokens, adminTokenResolver)
  const auditLog = new AuditLogService(storage.audit, changes)
  const operatorOrders = new OperatorOrders(storage.orders, changes, clock)
  const webhookEndpoints = new WebhookEndpointService({
    endpoints: storage.webhookEndpoints,
    recorder: changes,
    customers: storage.customers,
    destinations: { allowPrivateNetworks: config.webhookAllowPrivateNetworks, resolve: resolveHost ?? systemResolver },
    clock,
  })
  return {
    config,
    storage,
    clock,
    keyResolver,
    adminTokenResolver,
    recorders: { lastUsed, usage },
    changes,
    services: {
      keys,
      customers,
      adminTokens,
      usageHistory,
      auditLog,
      operatorOrders,
      webhookEndpoints,
      eventLog: new EventLogService(storage.events, changes),
      webhookDeliveries: new WebhookDeliveryService({
        deliveries: storage.webhookDeliveries,
        endpoints: storage.webhookEndpoints,
        recorder: changes,
        clock,
      }),
    },
  }
}

/**
 * The domain of a server process, built once from the config (Ozone's AppContext): storage, the
 * limiter, metrics, the caches, the recorders, the services and the background jobs. The main and
 * admin apps (app.ts) are adapters over it; service.ts starts its jobs and closes it. A build that
 * fails closes only what it opened itself.
 */
export async function buildDomain(config: Config, overrides: DomainOverrides = {}): Promise<Domain> {
  const clock = overrides.clock ?? systemClock
  const { logger } = overrides
  const warn = jobWarnings(logger)
  const opened: Array<{ close(): Promise<unknown> }> = []
  const closeOpened = async () => {
    for (const resource of opened.reverse()) await resource.close().catch(() => {})
  }
  try {
    const metrics = overrides.metrics ?? (await defaultMetrics())
    const storage = overrides.storage ?? (await openStorage(config, clock))
    if (overrides.storage === undefined) opened.push(storage)
    // The limiter logs (Redis outages, its state file) through the domain's logger, else nowhere.
    const limiter =
      overrides.limiter ?? (await createLimiter(config, clock, metrics, logger ?? (await import('pino')).pino({ enabled: false })))
    if (overrides.limiter === undefined) opened.push(limiter)
    const core = buildCore(config, {
      storage,
      clock,
      limiter,
      warn,
      onUsageDropped: () => metrics.usageDropped.inc(),
      resolveHost: overrides.resolveHost,
    })
    const readiness = new Readiness({
      storage,
      limiter,
      metrics,
      limiterRequired: config.redisUrl !== undefined && config.redisFailurePolicy === 'closed',
    })
    const limitEvents = new LimitEvents(core.changes, warn('writing a usage threshold or ban event failed; not retried'))
    const jobs = serverJobs({
      config,
      storage,
      clock,
      keyResolver: core.keyResolver,
      ...core.recorders,
      limitEvents,
      warn,
      recorder: core.changes,
      resolveHost: overrides.resolveHost ?? systemResolver,
      onDeliveryOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
    })
    metrics.webhookQueue = async () => ({ ...(await storage.webhookDeliveries.queueStats()), now: clock.now() })
    return {
      ...core,
      limiter,
      metrics,
      logger,
      readiness,
      limitEvents,
      jobs,
      close: async () => {
        await jobs.daemon.stop()
        await limiter.close()
        await storage.close()
      },
      discard: async () => {
        await jobs.daemon.stop()
        await closeOpened()
      },
    }
  } catch (error) {
    await closeOpened()
    throw error
  }
}

/**
 * The domain a CLI command works on: the same services over the configured storage (opened once,
 * closed by `close`), nothing started. `limiter` is what `keys usage` reads counters from (Redis,
 * or the state file), else none: its services then never peek.
 */
export async function buildCommandDomain(config: Config, options: { limiter?: Pick<RateLimiter, 'peek'> } = {}): Promise<CommandDomain> {
  const storage = await openStorage(config)
  const limiter = options.limiter ?? { peek: () => Promise.reject(new Error('no limiter: this command reads no counters')) }
  const core = buildCore(config, { storage, clock: systemClock, limiter, warn: () => () => {} })
  return { ...core, close: () => storage.close() }
}

// Imported when a server domain needs them (metrics, pino above): the CLI builds its domain from
// this module, and a command must not load the metrics client (test/system/cli/cli-startup.test.ts).
async function defaultMetrics(): Promise<Metrics> {
  const { Metrics } = await import('./ops/metrics.js')
  return new Metrics({ defaultMetrics: false })
}
