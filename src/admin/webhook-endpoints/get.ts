import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { AdminWebhookEndpointSchema, type AdminWebhookEndpointsOptions, EndpointIdParams, notFoundDoc, tags } from './schemas.js'
import { webhookEndpointJson } from './views.js'

/** GET /webhook-endpoints/{endpointId} (getWebhookEndpoint). */
export function getWebhookEndpoint(app: AdminApp, { webhookEndpoints }: AdminWebhookEndpointsOptions): void {
  app.get(
    '/webhook-endpoints/:endpointId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        description: 'The endpoint, never its secret.',
        tags,
        params: EndpointIdParams,
        response: {
          200: { description: 'The webhook endpoint.', ...ref(AdminWebhookEndpointSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
          ...notFoundDoc,
        },
      },
    },
    async (request) => webhookEndpointJson(await webhookEndpoints.getEndpoint(request.params.endpointId, changeContext(request))),
  )
}
