import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { type AdminWebhookEndpointsOptions, EndpointIdParams, notFoundDoc, tags } from './schemas.js'

/** DELETE /webhook-endpoints/{endpointId} (deleteWebhookEndpoint). */
export function deleteWebhookEndpoint(app: AdminApp, { webhookEndpoints }: AdminWebhookEndpointsOptions): void {
  app.delete(
    '/webhook-endpoints/:endpointId',
    {
      config: { ...ADMIN_AUTH, noBody: true },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description:
          'No more events are sent to it, and its secret is gone. To stop for a while instead, disable it (`enabled: false`). ' +
          'A second delete is 404. No body (none, or `{}`). Written to the audit log (`webhook_endpoint.delete`).',
        tags,
        params: EndpointIdParams,
        response: {
          204: { description: 'Deleted; no body.', headers: rateLimitHeaderDocs },
          // A body is refused (none, or {}), but read first: 413 and 415 come from the body parser.
          ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503),
          ...notFoundDoc,
        },
      },
    },
    async (request, reply) => {
      // No body: none, or `{}` for clients that always send one; anything else would be ignored, so it is refused.
      const body = request.body as unknown
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0))
        throw new ApiError('invalid_request', 'delete takes no body: send none, or {}')
      await webhookEndpoints.deleteEndpoint(request.params.endpointId, changeContext(request))
      return reply.code(204).send()
    },
  )
}
