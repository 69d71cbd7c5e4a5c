import type { RecordedChange } from '../changes/audit-log.js'
import type { ListWebhookEndpointsQuery, WebhookEndpointRecord } from './endpoint.js'

/** Rows to return: the caller asks for one more than a page to know whether another follows. */
export type WebhookEndpointPageFilter = Omit<ListWebhookEndpointsQuery, 'limit'> & { limit: number }

/** What an operator's update or a rotation writes, as the service computed it. */
export type WebhookEndpointUpdate = Pick<
  WebhookEndpointRecord,
  | 'url'
  | 'description'
  | 'events'
  | 'enabled'
  | 'secret'
  | 'previousSecret'
  | 'previousSecretExpiresAt'
  | 'failingSince'
  | 'disabledReason'
  | 'updatedAt'
>

/**
 * Storage of webhook endpoints (implemented by each store; `Storage.webhookEndpoints`). Every
 * change writes what it records (`recorded`: its audit entry, never the secret) in the same transaction.
 */
export interface WebhookEndpointRepository {
  insertEndpoint(record: WebhookEndpointRecord, recorded: RecordedChange): Promise<void>
  findEndpointById(id: string): Promise<WebhookEndpointRecord | undefined>
  /** Up to `limit` endpoints in ascending id order after `after`, filtered in SQL. */
  pageEndpoints(filter: WebhookEndpointPageFilter): Promise<WebhookEndpointRecord[]>
  /**
   * Writes `update` to endpoint `id` if it still has updatedAt `expectedUpdatedAt` (optimistic
   * concurrency: a delivery that marks it failing in between is not overwritten). Returns the
   * endpoint as written, or undefined when the condition failed (nothing written).
   */
  updateEndpoint(
    id: string,
    expectedUpdatedAt: number,
    update: WebhookEndpointUpdate,
    recorded: RecordedChange,
  ): Promise<WebhookEndpointRecord | undefined>
  /** Deletes endpoint `id`; the endpoint as it was, or undefined when there was none (nothing recorded). */
  deleteEndpoint(id: string, recorded: (deleted: WebhookEndpointRecord) => RecordedChange): Promise<WebhookEndpointRecord | undefined>
}
