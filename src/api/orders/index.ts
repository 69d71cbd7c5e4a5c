import { InventorySchema, NewOrderSchema, OrderSchema, OrderStatusSchema } from '../../orders/schemas.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { cancelOrder } from './cancel.js'
import { completeOrder } from './complete.js'
import { getOrder } from './get.js'
import { getInventory } from './inventory.js'
import { listOrders } from './list.js'
import { placeOrder } from './place.js'

/** The store (/store/…): its shared schemas, in the order of the document's components. */
export const ORDER_SCHEMAS = [OrderStatusSchema, NewOrderSchema, OrderSchema, InventorySchema]

/**
 * Its operations, in the order of the document's paths: orders that reserve an animal and sell it
 * (the state machines of orders/state.ts, enforced by the store), and the inventory. A caller sees
 * its own orders only (`orderOwner` of its key): another's order is 404, as if it did not exist.
 */
export function orderRoutes(app: PublicApp, options: PublicRoutesOptions): void {
  for (const route of [placeOrder, listOrders, getOrder, cancelOrder, completeOrder, getInventory]) route(app, options)
}
