import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { type AdminOrdersOptions, orderErrorResponses } from './options.js'
import { AdminOrderSchema, OrderIdParams, tags } from './schemas.js'
import { oneOrderJson } from './views.js'

/** POST /orders/{orderId}/cancel (cancelAnyOrder): any caller's placed order, as its owner cancels it on /v1. */
export function cancelOrder(app: AdminApp, { orders, admin }: AdminOrdersOptions): void {
  app.post(
    '/orders/:orderId/cancel',
    {
      config: { ...ADMIN_AUTH, noBody: true },
      schema: {
        operationId: 'cancelAnyOrder',
        summary: 'Cancel any order',
        description:
          'Cancels a placed order of any caller: the order is `cancelled`, its animal `available` again and the change written to the audit log (`order.cancel`), in one transaction. ' +
          'A cancelled, completed or expired order is 409 `order_not_placed` naming its status. No body (none, or `{}`).',
        tags,
        params: OrderIdParams,
        response: {
          200: { description: 'Order cancelled.', ...ref(AdminOrderSchema), headers: rateLimitHeaderDocs },
          ...orderErrorResponses(400, 401, 404, 'order_not_placed', 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const body = request.body as unknown
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0))
        throw new ApiError('invalid_request', 'cancel takes no body: send none, or {}')
      // No owner: an operator may cancel anyone's order, with its audit entry in the same transaction.
      return oneOrderJson(admin, await orders.cancel(request.params.orderId, changeContext(request)))
    },
  )
}
