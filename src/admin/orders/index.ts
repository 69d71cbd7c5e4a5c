import type { AdminApp } from '../common/routes.js'
import { cancelOrder } from './cancel.js'
import { getOrder } from './get.js'
import { listOrders, OrderPageSchema } from './list.js'
import type { AdminOrdersOptions } from './options.js'
import { AdminOrderSchema } from './schemas.js'

export type { AdminOrdersOptions } from './options.js'

/** The orders resource (/orders…): its shared schemas, in the order of the document's components. */
export const ORDER_SCHEMAS = [AdminOrderSchema, OrderPageSchema]

/** Its operations, in the order of the document's paths. */
export function orderRoutes(app: AdminApp, options: AdminOrdersOptions): void {
  for (const route of [listOrders, getOrder, cancelOrder]) route(app, options)
}
