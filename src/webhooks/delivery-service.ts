import type { ChangeContext } from '../changes/audit-log.js'
import { type ChangeRecorder, NOTHING_RECORDED } from '../changes/change-recorder.js'
import { type Clock, systemClock } from '../shared/clock.js'
import { conflict, invalid, notFound } from '../shared/refusal.js'
import type { DeliveryAttemptRecord, WebhookDeliveryRecord, WebhookDeliveryRepository } from './delivery.js'
import type { WebhookEndpointRecord } from './endpoint.js'
import { fanOut } from './fan-out.js'
import type { WebhookEndpointRepository } from './repository.js'

/** Events one transaction of a replay reads: a batch holds the SQLite writer for a few ms. */
export const REPLAY_BATCH = 1000
/**
 * How far before `since` a replay starts its walk of the log: events are in seq order, and their
 * times come from the clocks of the instances that wrote them, so an event written a moment after
 * another by an instance whose clock is behind has the higher seq and the earlier time. A replay
 * starts at the first event of `since` minus this, and keeps those at or after `since`: exact
 * unless two instances' clocks differ by more.
 */
export const REPLAY_CLOCK_SKEW_MS = 60_000

export interface DeliveryPage {
  deliveries: WebhookDeliveryRecord[]
  /** The `after` of the next page (an event position), or null on the last page. */
  nextAfter: number | null
}

export interface WebhookDeliveryServiceOptions {
  deliveries: WebhookDeliveryRepository
  endpoints: Pick<WebhookEndpointRepository, 'findEndpointById'>
  recorder: ChangeRecorder
  clock?: Clock
}

/**
 * The delivery log and what an operator does with it, for the admin API and the CLI: an endpoint's
 * deliveries (newest event first) and each one's attempts; a retry of one delivery (a new attempt
 * now, also of one given up); a replay of everything the endpoint receives since a time. Each
 * read and change is on the audit log (`webhook_delivery.list`, `.read`, `.retry`,
 * `webhook_endpoint.replay`). A retry or replay makes deliveries due now; the delivery worker of a
 * running server makes the attempts (the CLI never delivers).
 */
export class WebhookDeliveryService {
  private readonly clock: Clock

  constructor(private readonly options: WebhookDeliveryServiceOptions) {
    this.clock = options.clock ?? systemClock
  }

  async listDeliveries(endpointId: string, query: { limit: number; after?: number }, ctx?: ChangeContext): Promise<DeliveryPage> {
    const { limit, after } = query
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100)
      throw invalid('limit', (name) => `${name('limit')} must be an integer from 1 to 100`)
    await this.endpoint(endpointId)
    const rows = await this.options.deliveries.pageDeliveries({ endpointId, limit: limit + 1, before: after })
    const deliveries = rows.slice(0, limit)
    await this.options.recorder.read(ctx, { action: 'webhook_delivery.list', details: { endpointId, limit, after } })
    return { deliveries, nextAfter: rows.length > limit ? deliveries[deliveries.length - 1]!.eventSeq : null }
  }

  async getDelivery(
    endpointId: string,
    deliveryId: string,
    ctx?: ChangeContext,
  ): Promise<{ delivery: WebhookDeliveryRecord; attempts: DeliveryAttemptRecord[] }> {
    await this.endpoint(endpointId)
    const found = await this.options.deliveries.findDelivery(endpointId, deliveryId)
    if (found === undefined) throw notFound('webhook_delivery', deliveryId)
    await this.options.recorder.read(ctx, { action: 'webhook_delivery.read', details: { endpointId, deliveryId } })
    return found
  }

  /** A new attempt now, whatever the delivery's status (one given up included); its schedule goes on from its attempts. */
  async retryDelivery(endpointId: string, deliveryId: string, ctx: ChangeContext): Promise<WebhookDeliveryRecord> {
    const endpoint = await this.endpoint(endpointId)
    refuseDisabled(endpoint)
    const now = this.clock.now()
    const recorded = this.options.recorder.change(ctx, now, { action: 'webhook_delivery.retry', details: { endpointId, deliveryId } })
    const retried = await this.options.deliveries.retryDelivery(endpointId, deliveryId, now, recorded)
    if (retried === undefined) throw notFound('webhook_delivery', deliveryId)
    return retried
  }

  /**
   * Every event since `since` (a time, Unix ms) that the endpoint receives, up to the newest now,
   * made due now: a new delivery, or its delivery again (delivered or failed before). In batches of
   * REPLAY_BATCH events, each its own transaction; the record with the first. How many deliveries.
   */
  async replay(endpointId: string, since: number, ctx: ChangeContext): Promise<number> {
    const endpoint = await this.endpoint(endpointId)
    refuseDisabled(endpoint)
    const now = this.clock.now()
    if (!Number.isSafeInteger(since) || since < 0) throw invalid('since', (name) => `${name('since')} must be a time`)
    if (since > now) throw invalid('since', (name) => `${name('since')} must not be in the future`)
    const range = await this.options.deliveries.replayRange(since - REPLAY_CLOCK_SKEW_MS)
    const { uptoSeq } = range
    let recorded = this.options.recorder.change(ctx, now, { action: 'webhook_endpoint.replay', details: { endpointId, since } })
    let afterSeq = range.afterSeq
    let enqueued = 0
    for (;;) {
      const batch = await this.options.deliveries.replayBatch(
        { endpoint, since, afterSeq, uptoSeq, limit: REPLAY_BATCH, now, fanOut },
        recorded,
      )
      recorded = NOTHING_RECORDED
      enqueued += batch.enqueued
      if (batch.done) return enqueued
      afterSeq = batch.lastSeq
    }
  }

  private async endpoint(id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await this.options.endpoints.findEndpointById(id)
    if (endpoint === undefined) throw notFound('webhook_endpoint', id)
    return endpoint
  }
}

/** A disabled endpoint is sent nothing: what is made due for it would fail at once. */
function refuseDisabled(endpoint: WebhookEndpointRecord): void {
  if (!endpoint.enabled)
    throw conflict(`webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason ?? 'manual'}): enable it first`)
}
