import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, keyId, pageLimit, ref } from '../common/schemas.js'
import { type AdminOrdersOptions, orderErrorResponses } from './options.js'
import { AdminOrderSchema, orderStatus, tags } from './schemas.js'
import { orderJson } from './views.js'

export const OrderPageSchema = Type.Object(
  {
    data: Type.Array(ref(AdminOrderSchema)),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `after` of the next page (also in the Link rel="next" header); null on the last page.',
    }),
  },
  { $id: 'OrderPage', title: 'OrderPage', additionalProperties: false },
)

export const ListOrdersQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(
      Type.Unsafe<number>({
        type: 'integer',
        format: 'int64',
        minimum: 0,
        description: 'Return orders with an id after this one (ascending id order); follow Link rel="next" rather than build it.',
      }),
    ),
    status: Type.Optional(orderStatus),
    keyId: Type.Optional(keyId('Only the orders placed with this API key (an unknown key: an empty page).')),
  },
  { additionalProperties: false },
)

/** GET /orders (listAnyOrders): everyone's orders, as the key list pages keys. */
export function listOrders(app: AdminApp, { orders }: AdminOrdersOptions): void {
  app.get(
    '/orders',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listAnyOrders',
        summary: 'List orders',
        description:
          'Any caller\'s orders in ascending id order, optionally filtered by status and by the API key that placed them. Paged with `after` (Link rel="next").',
        tags,
        querystring: ListOrdersQuery,
        response: {
          200: { description: 'A page of orders.', ...ref(OrderPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...orderErrorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, status, keyId } = request.query
      const page = await orders.list({ limit, after, status, keyId }, changeContext(request))
      const { nextAfter } = page
      if (nextAfter !== null) reply.header('link', link(`${ADMIN_PREFIX}/orders`, { limit, status, keyId, after: nextAfter }))
      return { data: page.orders.map(orderJson), nextAfter }
    },
  )
}
