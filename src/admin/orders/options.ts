import { errorResponses as sharedErrorResponses } from '../../http/openapi-docs.js'
import type { OperatorOrders } from '../../orders/operator-orders.js'
import type { AdminRoutesOptions } from '../common/routes.js'

/** What the orders resource needs: every caller's orders, as operators see and change them (each call on record). */
export interface AdminOrdersOptions extends AdminRoutesOptions {
  orders: OperatorOrders
}

/** The shared error responses, with this resource's words for 404 and 409. */
export function orderErrorResponses(...answers: Array<number | 'order_not_placed'>): Record<number, object> {
  const out = sharedErrorResponses(...answers)
  if (out[404] !== undefined) out[404] = { ...out[404], description: 'No order with that id. Code: `not_found`.' }
  return out
}
