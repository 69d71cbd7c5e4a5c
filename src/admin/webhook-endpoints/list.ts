import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ENDPOINT_STATES, WEBHOOK_ENDPOINT_ID_PATTERN } from '../../webhooks/endpoint.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, errorResponses, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, customerId, pageLimit, ref } from '../common/schemas.js'
import { AdminWebhookEndpointSchema, type AdminWebhookEndpointsOptions, tags } from './schemas.js'
import { webhookEndpointJson } from './views.js'

export const WebhookEndpointPageSchema = Type.Object(
  {
    data: Type.Array(ref(AdminWebhookEndpointSchema)),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `after` of the next page (also in the Link rel="next" header); null on the last page.',
    }),
  },
  { $id: 'WebhookEndpointPage', title: 'WebhookEndpointPage', additionalProperties: false },
)

export const ListWebhookEndpointsQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(
      Type.String({
        pattern: WEBHOOK_ENDPOINT_ID_PATTERN,
        description: 'Return endpoints with an id after this one (ascending id order); follow Link rel="next" rather than build it.',
      }),
    ),
    customerId: Type.Optional(customerId('Only the endpoints of this customer.')),
    state: Type.Optional(
      Type.Unsafe<(typeof ENDPOINT_STATES)[number]>({
        type: 'string',
        enum: [...ENDPOINT_STATES],
        description: 'Only the enabled, or only the disabled, endpoints.',
      }),
    ),
  },
  { additionalProperties: false },
)

/** GET /webhook-endpoints (listWebhookEndpoints). */
export function listWebhookEndpoints(app: AdminApp, { webhookEndpoints }: AdminWebhookEndpointsOptions): void {
  app.get(
    '/webhook-endpoints',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints',
        description:
          'Endpoints in ascending id order, optionally of one customer or in one state. Paged with `after` (Link rel="next"). Never a secret.',
        tags,
        querystring: ListWebhookEndpointsQuery,
        response: {
          200: {
            description: 'A page of webhook endpoints.',
            ...ref(WebhookEndpointPageSchema),
            headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc },
          },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, customerId, state } = request.query
      const page = await webhookEndpoints.listEndpoints({ limit, after, customerId, state }, changeContext(request))
      if (page.nextAfter !== null)
        reply.header('link', link(`${ADMIN_PREFIX}/webhook-endpoints`, { limit, customerId, state, after: page.nextAfter }))
      return { data: page.endpoints.map(webhookEndpointJson), nextAfter: page.nextAfter }
    },
  )
}
