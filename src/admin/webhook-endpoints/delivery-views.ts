import type { DeliveryAttemptRecord, WebhookDeliveryRecord } from '../../webhooks/delivery.js'
import { iso, isoOrNull } from '../common/views.js'
import type { AdminWebhookDelivery, AdminWebhookDeliveryDetail } from './delivery-schemas.js'

/** A delivery as the admin API answers it; the CLI's --json prints the same document. */
export const deliveryJson = (d: WebhookDeliveryRecord): AdminWebhookDelivery => ({
  id: d.id,
  endpointId: d.endpointId,
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: isoOrNull(d.nextAttemptAt),
  lastStatusCode: d.lastStatusCode,
  lastDurationMs: d.lastDurationMs,
  lastError: d.lastError,
  createdAt: iso(d.createdAt),
  updatedAt: iso(d.updatedAt),
})

/** A delivery with every attempt, oldest first. */
export const deliveryDetailJson = (found: {
  delivery: WebhookDeliveryRecord
  attempts: DeliveryAttemptRecord[]
}): AdminWebhookDeliveryDetail => ({
  ...deliveryJson(found.delivery),
  attemptLog: found.attempts.map((a) => ({
    attempt: a.attempt,
    startedAt: iso(a.startedAt),
    durationMs: a.durationMs,
    statusCode: a.statusCode,
    error: a.error,
    responseExcerpt: a.responseExcerpt,
  })),
})
