import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, changeContext } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { type AdminOrdersOptions, orderErrorResponses } from './options.js'
import { AdminOrderSchema, OrderIdParams, tags } from './schemas.js'
import { oneOrderJson } from './views.js'

/** GET /orders/{orderId} (getAnyOrder): any caller's order. */
export function getOrder(app: AdminApp, { orders, admin }: AdminOrdersOptions): void {
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
    async (request) => oneOrderJson(admin, await orders.get(request.params.orderId, changeContext(request))),
  )
}
