import type { WebhookEndpointRecord } from '../../webhooks/endpoint.js'
import { iso, isoOrNull } from '../common/views.js'
import type { AdminWebhookEndpoint } from './schemas.js'

/** A webhook endpoint as the admin API answers it, never with a secret; the CLI's --json prints the same document. */
export const webhookEndpointJson = (e: WebhookEndpointRecord): AdminWebhookEndpoint => ({
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
})

/** The answer of a create or a rotation: the secret, this once, and the endpoint. */
export const endpointWithSecretJson = (e: WebhookEndpointRecord) => ({ secret: e.secret, endpoint: webhookEndpointJson(e) })
