import { Type } from 'typebox'
import { apiKeyOf } from '../../auth/admission.js'
import { sendConditional } from '../../http/conditional-reads.js'
import { errorResponses, etagHeaderDoc, ifNoneMatchHeaders, notModifiedResponse, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { orderOwner } from '../../keys/api-key.js'
import { OrderSchema } from '../../orders/schemas.js'
import type { OrderStatus } from '../../orders/state.js'
import { nextLink } from '../common/links.js'
import { type PublicApp, type PublicRoutesOptions, V1_PREFIX } from '../common/routes.js'
import { int64, LIST_LIMIT, ref } from '../common/schemas.js'
import { orderView } from './views.js'

export const ListOrdersQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: LIST_LIMIT.min,
        maximum: LIST_LIMIT.max,
        default: LIST_LIMIT.default,
        description: 'Maximum number of orders returned (1 to 100; never clamped: out of range is 400).',
      }),
    ),
    status: Type.Optional(Type.Unsafe<OrderStatus>({ $ref: 'OrderStatus' })),
    after: Type.Optional(
      int64('Return orders with an id greater than this one. Clients follow the Link rel="next" header rather than building it.', {
        minimum: 0,
      }),
    ),
  },
  { additionalProperties: false },
)

/** GET /store/orders (listOrders): the caller's own orders (`orderOwner` of its key). */
export function listOrders(app: PublicApp, { orders, linkBase, entityTags }: PublicRoutesOptions): void {
  app.get(
    '/store/orders',
    {
      config: { conditional: true, scope: 'orders:read' },
      schema: {
        operationId: 'listOrders',
        summary: 'List your orders',
        description:
          "Returns up to `limit` of the caller's orders (placed with this API key or the keys of its rotation chain, or, for a key of a customer, any key of the customer) in ascending id order, optionally only those with `status`. " +
          'When more exist, a `Link: <...>; rel="next"` header gives the next page; the body is a bare array, as listPets answers. ' +
          'A placed order whose hold ran out shows `expired` once the expiry sweep has run (ORDER_SWEEP_MS); a change of it is refused at once.',
        tags: ['store'],
        querystring: ListOrdersQuery,
        headers: ifNoneMatchHeaders,
        response: {
          200: {
            description: 'Success: an array of orders.',
            type: 'array',
            items: ref(OrderSchema),
            headers: {
              ...rateLimitHeaderDocs,
              ...etagHeaderDoc,
              Link: { type: 'string', description: 'rel="next": the next page, present only when more orders exist.' },
            },
          },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = LIST_LIMIT.default, status, after } = request.query
      const rows = await orders.listOrders({ limit: limit + 1, owner: orderOwner(apiKeyOf(request)), status, afterId: after })
      let link: string | undefined
      if (rows.length > limit) {
        link = nextLink(linkBase, `${V1_PREFIX}/store/orders`, { limit, status, lastId: rows[limit - 1]!.id })
        reply.header('link', link)
      }
      const body = reply.serialize(rows.slice(0, limit).map(orderView)) as string
      return sendConditional(request, reply, body, entityTags.of(body, link))
    },
  )
}
