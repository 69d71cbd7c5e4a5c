import type { OrderRecord } from '../../orders/repository.js'
import { ApiError } from '../../shared/errors.js'
import type { Int64 } from '../../shared/int64.js'
import { V1_PREFIX } from '../common/routes.js'

/** What the store's operations share: an order as the API shows it, its path, and the answer of one that is not the caller's. */

/** An order as the API shows it (orders/view.ts: its events show it the same). */
export { orderView } from '../../orders/view.js'

export const orderPath = (record: OrderRecord) => `${V1_PREFIX}/store/orders/${record.id}`

/** Another caller's order is answered as one that does not exist: its id confirms nothing. */
export const orderNotFound = (id: Int64) => new ApiError('not_found', `No order with id ${id}`)
