import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { registerOrderChange } from './change.js'

/** POST /store/orders/{orderId}/cancel (cancelOrder). */
export function cancelOrder(app: PublicApp, options: PublicRoutesOptions): void {
  registerOrderChange(app, options, {
    change: 'cancel',
    operationId: 'cancelOrder',
    summary: 'Cancel one of your orders',
    does: 'Cancels a placed order: the order is `cancelled` and its animal `available` again, in one transaction. ',
    done: 'Order cancelled.',
  })
}
