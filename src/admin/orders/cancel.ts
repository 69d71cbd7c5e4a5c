import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { type AdminOrdersOptions, auditEntry, orderErrorResponses } from './audit.js'
import { AdminOrderSchema, OrderIdParams, tags } from './schemas.js'
import { oneOrderJson, orderNotFound } from './views.js'

/** POST /orders/{orderId}/cancel (cancelAnyOrder): any caller's placed order, as its owner cancels it on /v1. */
export function cancelOrder(app: AdminApp, options: AdminOrdersOptions): void {
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
      const id = request.params.orderId
      // No owner: an operator may cancel anyone's order. Its audit entry is written in the same
      // transaction, as a key change's is: no cancel without its entry, nor the reverse.
      const ctx = changeContext(request)
      const result = await options.orders.changeOrder(id, 'cancel', {
        audit: (order) => auditEntry(options, ctx, 'order.cancel', order.keyId, { orderId: String(order.id), owner: order.owner }),
      })
      if (result.outcome === 'not_found') throw orderNotFound(id)
      if (result.outcome === 'not_placed')
        throw new ApiError('order_not_placed', `Order ${result.order.id} cannot be cancelled: it is ${result.order.status}`)
      return oneOrderJson(options.admin, result.order)
    },
  )
}
