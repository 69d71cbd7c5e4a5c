import type { WebhookEndpointRecord } from './endpoint.js'

const iso = (ms: number) => new Date(ms).toISOString()
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))

/**
 * A webhook endpoint as the admin API shows it (its AdminWebhookEndpoint schema): never a secret.
 * The admin API's answers, the CLI's --json and the `webhook_endpoint.disabled` event's `data` are
 * this one document, so a subscriber reads the shape an operator reads.
 */
export function endpointDocument(e: WebhookEndpointRecord) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: [...e.events],
    customerId: e.customerId,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    failingSince: isoOrNull(e.failingSince),
    previousSecretExpiresAt: isoOrNull(e.previousSecretExpiresAt),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  }
}

/** What the audit log keeps of an endpoint: never its secrets, nor its description's text. */
export const endpointAuditDetails = (
  e: Pick<WebhookEndpointRecord, 'id' | 'url' | 'events' | 'customerId' | 'enabled' | 'disabledReason'>,
) => ({
  endpointId: e.id,
  url: e.url,
  events: e.events,
  customerId: e.customerId,
  enabled: e.enabled,
  disabledReason: e.disabledReason,
})
