import { Type } from 'typebox'
import { LIST_ORDERS } from '../../changes/audit-log.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, customerId, keyId, pageLimit, ref } from '../common/schemas.js'
import { type AdminOrdersOptions, orderErrorResponses } from './options.js'
import { AdminOrderSchema, orderStatus, tags } from './schemas.js'
import { orderJson, placingKeys } from './views.js'

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
        description:
          'Cursor, in the listing order: orders past this id (with `order=asc`, higher ids; with `order=desc`, lower). Follow Link rel="next" rather than build it.',
      }),
    ),
    order: Type.Optional(
      Type.Unsafe<(typeof LIST_ORDERS)[number]>({
        type: 'string',
        enum: [...LIST_ORDERS],
        // No schema default: a listing without `order` keeps its links and its audit entry as before.
        description: '`asc`: oldest first (ascending id, the default, as before this parameter); `desc`: newest first.',
      }),
    ),
    status: Type.Optional(orderStatus),
    keyId: Type.Optional(keyId('Only the orders placed with this API key (an unknown key: an empty page).')),
    customerId: Type.Optional(
      customerId('Only the orders of this customer, placed with any of its keys (an unknown customer: an empty page).'),
    ),
  },
  { additionalProperties: false },
)

/** GET /orders (listAnyOrders): everyone's orders, as the key list pages keys. */
export function listOrders(app: AdminApp, { orders, admin }: AdminOrdersOptions): void {
  app.get(
    '/orders',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listAnyOrders',
        summary: 'List orders',
        description:
          "Any caller's orders, oldest first (ascending id) or newest first with `order=desc`, optionally filtered by status, by the API key that placed them and by customer (all filters combined with AND). " +
          'Each order names the key that placed it (`keyId`, `keyName`) and its customer (`customerId`). Paged with `after`, an order id in the listing order (Link rel="next" keeps the filters and the order).',
        tags,
        querystring: ListOrdersQuery,
        response: {
          200: { description: 'A page of orders.', ...ref(OrderPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...orderErrorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, order, status, keyId, customerId } = request.query
      const page = await orders.list({ limit, after, order, status, keyId, customerId }, changeContext(request))
      const { nextAfter } = page
      const keys = await placingKeys(admin, page.orders)
      if (nextAfter !== null)
        reply.header('link', link(`${ADMIN_PREFIX}/orders`, { limit, order, status, keyId, customerId, after: nextAfter }))
      return { data: page.orders.map((o) => orderJson(o, keys.get(o.keyId))), nextAfter }
    },
  )
}
