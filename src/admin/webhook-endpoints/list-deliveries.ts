import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, errorResponses, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, pageLimit, ref } from '../common/schemas.js'
import { AdminWebhookDeliverySchema } from './delivery-schemas.js'
import { deliveryJson } from './delivery-views.js'
import { type AdminWebhookEndpointsOptions, EndpointIdParams, notFoundDoc, tags } from './schemas.js'

export const WebhookDeliveryPageSchema = Type.Object(
  {
    data: Type.Array(ref(AdminWebhookDeliverySchema)),
    nextAfter: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The `after` of the next page (also in the Link rel="next" header); null on the last page.',
    }),
  },
  { $id: 'WebhookDeliveryPage', title: 'WebhookDeliveryPage', additionalProperties: false },
)

export const ListWebhookDeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'The deliveries after this position in the listing (of older events: `nextAfter`); follow Link rel="next" rather than build it.',
      }),
    ),
  },
  { additionalProperties: false },
)

/** GET /webhook-endpoints/{endpointId}/deliveries (listWebhookDeliveries). */
export function listWebhookDeliveries(app: AdminApp, { webhookDeliveries }: AdminWebhookEndpointsOptions): void {
  app.get(
    '/webhook-endpoints/:endpointId/deliveries',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List a webhook endpoint’s deliveries',
        description:
          'The delivery log of one endpoint, newest event first: each event sent to it, its status, how many attempts, the last one’s status code, duration and error, and when the next is due. ' +
          'Paged with `after` (`nextAfter`, and Link rel="next"). Each attempt is in the delivery’s own view. Recorded in the audit log (`webhook_delivery.list`).',
        tags,
        params: EndpointIdParams,
        querystring: ListWebhookDeliveriesQuery,
        response: {
          200: {
            description: 'A page of deliveries.',
            ...ref(WebhookDeliveryPageSchema),
            headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc },
          },
          ...errorResponses(400, 401, 404, 429, 500, 503),
          ...notFoundDoc,
        },
      },
    },
    async (request, reply) => {
      const { endpointId } = request.params
      const { limit = ADMIN_LIST_LIMIT.default, after } = request.query
      const page = await webhookDeliveries.listDeliveries(endpointId, { limit, after }, changeContext(request))
      if (page.nextAfter !== null)
        reply.header('link', link(`${ADMIN_PREFIX}/webhook-endpoints/${endpointId}/deliveries`, { limit, after: page.nextAfter }))
      return { data: page.deliveries.map(deliveryJson), nextAfter: page.nextAfter }
    },
  )
}
