import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { LIST_ORDERS } from '../../keys/administration.js'
import { customerOrderOwner } from '../../keys/api-key.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, customerId, keyId, pageLimit, ref } from '../common/schemas.js'
import { type AdminOrdersOptions, orderErrorResponses, record } from './audit.js'
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
export function listOrders(app: AdminApp, options: AdminOrdersOptions): void {
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
      const owner = customerId === undefined ? undefined : customerOrderOwner(customerId)
      // One more than the page: whether there is a next page, without a count.
      const rows = await options.orders.listOrders({ limit: limit + 1, afterId: after, order, status, keyId, owner })
      const data = rows.slice(0, limit)
      const nextAfter = rows.length > limit ? String(data[data.length - 1]!.id) : null
      const keys = await placingKeys(options.admin, data)
      // `after` may be a bigint (int64 above 2^53), which JSON cannot hold: the audit details keep its digits.
      await record(options, changeContext(request), 'order.list', keyId ?? null, {
        limit,
        after: after === undefined ? undefined : String(after),
        order,
        status,
        customerId,
      })
      if (nextAfter !== null)
        reply.header('link', link(`${ADMIN_PREFIX}/orders`, { limit, order, status, keyId, customerId, after: nextAfter }))
      return { data: data.map((o) => orderJson(o, keys.get(o.keyId))), nextAfter }
    },
  )
}
