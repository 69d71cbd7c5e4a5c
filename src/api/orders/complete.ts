import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { registerOrderChange } from './change.js'

/** POST /store/orders/{orderId}/complete (completeOrder). */
export function completeOrder(app: PublicApp, options: PublicRoutesOptions): void {
  registerOrderChange(app, options, {
    change: 'complete',
    operationId: 'completeOrder',
    summary: 'Complete one of your orders',
    does: 'Completes a placed order: the order is `completed` and its animal `sold`, in one transaction. ',
    done: 'Order completed.',
  })
}
