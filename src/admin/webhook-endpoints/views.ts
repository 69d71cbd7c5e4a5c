import type { WebhookEndpointRecord } from '../../webhooks/endpoint.js'
import { endpointDocument } from '../../webhooks/endpoint-document.js'
import type { AdminWebhookEndpoint } from './schemas.js'

/** A webhook endpoint as the admin API answers it, never with a secret: webhooks/endpoint-document.ts, which the CLI's --json and the `webhook_endpoint.disabled` event's data share. */
export const webhookEndpointJson = (e: WebhookEndpointRecord): AdminWebhookEndpoint => endpointDocument(e)

/** The answer of a create or a rotation: the secret, this once, and the endpoint. */
export const endpointWithSecretJson = (e: WebhookEndpointRecord) => ({ secret: e.secret, endpoint: webhookEndpointJson(e) })
