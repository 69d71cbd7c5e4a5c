import type { ChangeRecorder } from '../changes/change-recorder.js'
import type { Config } from '../config/config.js'
import { EventRetention } from '../events/retention.js'
import { IdempotencySweep } from '../idempotency/sweep.js'
import type { KeyResolver } from '../keys/key-resolver.js'
import type { LastUsedRecorder } from '../keys/last-used.js'
import type { LimitEvents } from '../keys/limit-events.js'
import { OrderExpiry } from '../orders/expiry.js'
import { reportSweep } from '../secret-scanning/reports.js'
import type { Clock } from '../shared/clock.js'
import type { PeriodicJob } from '../shared/periodic-job.js'
import type { Storage } from '../storage/storage.js'
import type { UsageRecorder } from '../usage/recorder.js'
import { USAGE_RETENTION_INTERVAL_MS, UsageRetention } from '../usage/retention.js'
import { type DeliveryOutcomeLabel, DeliveryWorker } from '../webhooks/delivery-worker.js'
import type { HostResolver } from '../webhooks/destination.js'
import { ReceiverConnections, sendWebhook } from '../webhooks/sender.js'
import { Daemon } from './index.js'

export interface JobParts {
  config: Config
  storage: Storage
  clock: Clock
  /** The domain's key cache, its recorders: built with the services, which read them. */
  keyResolver: KeyResolver
  lastUsed: LastUsedRecorder
  usage: UsageRecorder
  /** The limiter's events being written: a stop waits for them, before storage closes. */
  limitEvents: LimitEvents
  /** Where a failed run is told, with what it means (the next run tries again). */
  warn: (message: string) => (error: unknown) => void
  /** The maker of audit entries: an endpoint the webhook delivery disables is on record. */
  recorder: ChangeRecorder
  /** How webhook receivers' host names resolve (the domain's: the system's, or a test's). */
  resolveHost: HostResolver
  /** Each webhook delivery attempt's outcome, for the metrics. */
  onDeliveryOutcome?: (outcome: DeliveryOutcomeLabel) => void
}

/** The server's background jobs, and the sweeps by name (a test runs one rather than wait for its timer). */
export interface Jobs {
  daemon: Daemon
  orderExpiry: OrderExpiry
  usageRetention: UsageRetention
  idempotencySweep: IdempotencySweep
  scanReportSweep: PeriodicJob
  eventRetention: EventRetention
  webhookDelivery: DeliveryWorker
}

/**
 * Every background job of a server process, each built once, in the order the daemon starts them:
 * the key-change poll first (its first read of the change log and of the known secrets is done
 * before a request is served), then the recorders' flushes, then the sweeps.
 */
export function serverJobs(parts: JobParts): Jobs {
  const { config, storage, clock, keyResolver, lastUsed, usage, limitEvents, warn } = parts
  const usageRetention = new UsageRetention(storage.usage, {
    keep: { minute: config.usageMinuteRetentionMs, hour: config.usageHourRetentionMs },
    intervalMs: USAGE_RETENTION_INTERVAL_MS,
    clock,
    onError: warn('deleting old usage history failed; retried by the next run'),
  })
  const idempotencySweep = new IdempotencySweep(storage.pets, clock, warn('idempotency record sweep failed; the next sweep tries again'))
  const scanReportSweep = reportSweep(storage.scanReports, clock, warn('secret scanning report sweep failed'))
  const orderExpiry = new OrderExpiry(storage.orders, {
    intervalMs: config.orderSweepMs,
    onError: warn('expiring orders failed; retried by the next run'),
  })
  const eventRetention = new EventRetention(storage.events, {
    keepMs: config.eventRetentionMs,
    clock,
    onError: warn('deleting old events failed; retried by the next run'),
  })
  const { webhookDelivery, connections } = webhookJobs(parts)
  const daemon = new Daemon([
    { name: 'key-change poll', start: () => keyResolver.start(), stop: () => keyResolver.stop() },
    { name: 'last-use flush', start: () => lastUsed.start(), stop: () => lastUsed.stop() },
    { name: 'usage flush', start: () => usage.start(), stop: () => usage.stop() },
    { name: 'limit events', start: () => {}, stop: () => limitEvents.settled() },
    { name: 'usage retention', start: () => usageRetention.start(), stop: () => usageRetention.stop() },
    { name: 'idempotency sweep', start: () => idempotencySweep.start(), stop: () => idempotencySweep.stop() },
    { name: 'scan report sweep', start: () => scanReportSweep.start(), stop: () => scanReportSweep.stop() },
    { name: 'order expiry', start: () => orderExpiry.start(), stop: () => orderExpiry.stop() },
    { name: 'event retention', start: () => eventRetention.start(), stop: () => eventRetention.stop() },
    // WEBHOOK_DELIVERY=off: built (a test may run them by hand), never started.
    ...(config.webhookDelivery === 'on'
      ? [
          {
            name: 'webhook delivery',
            start: () => webhookDelivery.start(),
            // Its attempts ended, the connections it kept to receivers are closed.
            stop: () => webhookDelivery.stop().finally(() => connections.close()),
          },
        ]
      : []),
  ])
  return { daemon, orderExpiry, usageRetention, idempotencySweep, scanReportSweep, eventRetention, webhookDelivery }
}

/** The webhook delivery worker and the connections to receivers it keeps. */
function webhookJobs({ config, storage, clock, warn, recorder, resolveHost, onDeliveryOutcome }: JobParts) {
  const connections = new ReceiverConnections()
  const rules = {
    timeoutMs: config.webhookTimeoutMs,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    resolve: resolveHost,
    connections,
  }
  const webhookDelivery = new DeliveryWorker(storage.webhookDeliveries, {
    clock,
    concurrency: config.webhookConcurrency,
    timeoutMs: config.webhookTimeoutMs,
    rules: { scheduleMs: config.webhookRetryScheduleMs, disableAfterMs: config.webhookDisableAfterMs },
    send: (url, headers, body, signal) => sendWebhook(url, headers, body, rules, signal),
    recorder,
    onOutcome: onDeliveryOutcome,
    onError: warn('webhook delivery failed; the delivery is tried again when its lease ends'),
  })
  return { webhookDelivery, connections }
}
