import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import {
  AdminWebhookEndpointSchema,
  type AdminWebhookEndpointsOptions,
  description,
  EndpointIdParams,
  endpointUrl,
  events,
  notFoundDoc,
  tags,
} from './schemas.js'
import { webhookEndpointJson } from './views.js'

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(endpointUrl),
    events: Type.Optional(events),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'false: no more events are sent to it (disabledReason `manual`); true: enabled again, afresh (disabledReason and failingSince cleared).',
      }),
    ),
    description: Type.Optional(description),
  },
  {
    $id: 'UpdateWebhookEndpoint',
    title: 'UpdateWebhookEndpoint',
    additionalProperties: false,
    description: 'Only the fields sent change (at least one); null clears the description.',
  },
)
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>

/** PATCH /webhook-endpoints/{endpointId} (updateWebhookEndpoint). */
export function updateWebhookEndpoint(app: AdminApp, { webhookEndpoints }: AdminWebhookEndpointsOptions): void {
  app.patch(
    '/webhook-endpoints/:endpointId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        description:
          'Changes its URL (judged as at creation), event types, description, or whether it is enabled: only the fields sent. ' +
          'Enabling a disabled endpoint (whatever disabled it: an operator, a 410, failing too long) starts it afresh. Written to the audit log.',
        tags,
        params: EndpointIdParams,
        body: ref(UpdateWebhookEndpointBody),
        response: {
          200: { description: 'The endpoint as updated.', ...ref(AdminWebhookEndpointSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503),
          ...notFoundDoc,
        },
      },
    },
    async (request) => {
      if (Object.keys(request.body).length === 0)
        throw new ApiError('invalid_request', 'body must name at least one field to change: url, events, enabled, description')
      return webhookEndpointJson(await webhookEndpoints.updateEndpoint(request.params.endpointId, request.body, changeContext(request)))
    },
  )
}
