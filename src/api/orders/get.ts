import { apiKeyOf } from '../../auth/admission.js'
import { sendConditional } from '../../http/conditional-reads.js'
import { errorResponses, etagHeaderDoc, ifNoneMatchHeaders, notModifiedResponse, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { orderOwner } from '../../keys/api-key.js'
import { OrderIdParams, OrderSchema } from '../../orders/schemas.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { orderNotFound, orderView } from './views.js'

/** GET /store/orders/{orderId} (getOrder): one of the caller's orders. */
export function getOrder(app: PublicApp, { orders, entityTags }: PublicRoutesOptions): void {
  app.get(
    '/store/orders/:orderId',
    {
      config: { conditional: true, scope: 'orders:read' },
      schema: {
        operationId: 'getOrder',
        summary: 'Get one of your orders',
        description: "One of the caller's orders; another caller's order is 404, as an order that does not exist.",
        tags: ['store'],
        params: OrderIdParams,
        headers: ifNoneMatchHeaders,
        response: {
          200: { description: 'Success.', ...ref(OrderSchema), headers: { ...rateLimitHeaderDocs, ...etagHeaderDoc } },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const id = request.params.orderId
      const found = await orders.getOrder(id, { owner: orderOwner(apiKeyOf(request)) })
      if (found === undefined) throw orderNotFound(id)
      const body = reply.serialize(orderView(found)) as string
      return sendConditional(request, reply, body, entityTags.of(body))
    },
  )
}
