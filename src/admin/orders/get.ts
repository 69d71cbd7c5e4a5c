import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import type { OrderRepository } from '../../orders/repository.js'
import { ADMIN_AUTH, type AdminApp, changeContext } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { type AdminOrdersOptions, orderErrorResponses, record } from './audit.js'
import { AdminOrderSchema, OrderIdParams, tags } from './schemas.js'
import { oneOrderJson, orderNotFound } from './views.js'

/** GET /orders/{orderId} (getAnyOrder): any caller's order. */
export function getOrder(app: AdminApp, options: AdminOrdersOptions): void {
  const orders: OrderRepository = options.orders
  app.get(
    '/orders/:orderId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getAnyOrder',
        summary: 'Get any order',
        tags,
        params: OrderIdParams,
        response: {
          200: { description: 'The order.', ...ref(AdminOrderSchema), headers: rateLimitHeaderDocs },
          ...orderErrorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const id = request.params.orderId
      const order = await orders.getOrder(id)
      if (order === undefined) throw orderNotFound(id)
      await record(options, changeContext(request), 'order.read', order.keyId, { orderId: String(id) })
      return oneOrderJson(options.admin, order)
    },
  )
}
