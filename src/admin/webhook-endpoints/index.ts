import type { AdminApp } from '../common/routes.js'
import { CreateWebhookEndpointBody, createWebhookEndpoint, WebhookEndpointWithSecretSchema } from './create.js'
import { deleteWebhookEndpoint } from './delete.js'
import { AdminWebhookDeliveryDetailSchema, AdminWebhookDeliverySchema, DeliveryAttemptSchema } from './delivery-schemas.js'
import { getWebhookEndpoint } from './get.js'
import { getWebhookDelivery } from './get-delivery.js'
import { listWebhookEndpoints, WebhookEndpointPageSchema } from './list.js'
import { listWebhookDeliveries, WebhookDeliveryPageSchema } from './list-deliveries.js'
import { ReplayWebhookEndpointBody, replayWebhookEndpoint, WebhookReplaySchema } from './replay.js'
import { retryWebhookDelivery } from './retry-delivery.js'
import { RotateWebhookSecretBody, rotateWebhookEndpointSecret } from './rotate-secret.js'
import { AdminWebhookEndpointSchema, type AdminWebhookEndpointsOptions } from './schemas.js'
import { UpdateWebhookEndpointBody, updateWebhookEndpoint } from './update.js'

export type { AdminWebhookEndpointsOptions } from './schemas.js'

/** The webhook endpoints resource (/webhook-endpoints…): its shared schemas, in the order of the document's components. */
export const WEBHOOK_ENDPOINT_SCHEMAS = [
  AdminWebhookEndpointSchema,
  CreateWebhookEndpointBody,
  UpdateWebhookEndpointBody,
  RotateWebhookSecretBody,
  WebhookEndpointWithSecretSchema,
  WebhookEndpointPageSchema,
  AdminWebhookDeliverySchema,
  DeliveryAttemptSchema,
  AdminWebhookDeliveryDetailSchema,
  WebhookDeliveryPageSchema,
  ReplayWebhookEndpointBody,
  WebhookReplaySchema,
]

/** Its operations, in the order of the document's paths. */
export function webhookEndpointRoutes(app: AdminApp, options: AdminWebhookEndpointsOptions): void {
  for (const route of [
    createWebhookEndpoint,
    listWebhookEndpoints,
    getWebhookEndpoint,
    updateWebhookEndpoint,
    deleteWebhookEndpoint,
    rotateWebhookEndpointSecret,
    listWebhookDeliveries,
    getWebhookDelivery,
    retryWebhookDelivery,
    replayWebhookEndpoint,
  ])
    route(app, options)
}
