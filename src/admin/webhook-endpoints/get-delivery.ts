import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { AdminWebhookDeliveryDetailSchema, DeliveryIdParams, deliveryNotFoundDoc } from './delivery-schemas.js'
import { deliveryDetailJson } from './delivery-views.js'
import { type AdminWebhookEndpointsOptions, tags } from './schemas.js'

/** GET /webhook-endpoints/{endpointId}/deliveries/{deliveryId} (getWebhookDelivery). */
export function getWebhookDelivery(app: AdminApp, { webhookDeliveries }: AdminWebhookEndpointsOptions): void {
  app.get(
    '/webhook-endpoints/:endpointId/deliveries/:deliveryId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getWebhookDelivery',
        summary: 'Get a webhook delivery with its attempts',
        description:
          'One delivery and every attempt of it, oldest first: when it started, how long it took, the status code or why there was none, and the first characters of the answer. ' +
          'Recorded in the audit log (`webhook_delivery.read`).',
        tags,
        params: DeliveryIdParams,
        response: {
          200: { description: 'The delivery and its attempts.', ...ref(AdminWebhookDeliveryDetailSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
          ...deliveryNotFoundDoc,
        },
      },
    },
    async (request) => {
      const { endpointId, deliveryId } = request.params
      return deliveryDetailJson(await webhookDeliveries.getDelivery(endpointId, deliveryId, changeContext(request)))
    },
  )
}
