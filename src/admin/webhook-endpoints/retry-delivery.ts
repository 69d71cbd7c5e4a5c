import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { AdminWebhookDeliverySchema, DeliveryIdParams, deliveryNotFoundDoc } from './delivery-schemas.js'
import { deliveryJson } from './delivery-views.js'
import { type AdminWebhookEndpointsOptions, tags } from './schemas.js'

/** POST /webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry (retryWebhookDelivery). */
export function retryWebhookDelivery(app: AdminApp, { webhookDeliveries }: AdminWebhookEndpointsOptions): void {
  app.post(
    '/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry',
    {
      config: { ...ADMIN_AUTH, noBody: true },
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a webhook delivery now',
        description:
          'Makes the delivery due now, whatever its status: a delivery given up (`failed`) or delivered is sent once more, a pending one without waiting for its next attempt. ' +
          'A running server makes the attempt within a second; if it fails, the retry schedule goes on from the attempts made. ' +
          'A disabled endpoint is 409 (enable it first). No body (none, or `{}`). Recorded in the audit log (`webhook_delivery.retry`).',
        tags,
        params: DeliveryIdParams,
        response: {
          202: { description: 'Due now; the attempt follows.', ...ref(AdminWebhookDeliverySchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
          ...deliveryNotFoundDoc,
          409: { ...errorResponses(409)[409], description: 'The endpoint is disabled: enable it first. Code: `conflict`.' },
        },
      },
    },
    async (request, reply) => {
      const body = request.body as unknown
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0))
        throw new ApiError('invalid_request', 'retry takes no body: send none, or {}')
      const { endpointId, deliveryId } = request.params
      const retried = await webhookDeliveries.retryDelivery(endpointId, deliveryId, changeContext(request))
      return reply.code(202).send(deliveryJson(retried))
    },
  )
}
