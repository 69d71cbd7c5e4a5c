import type { OrderRecord } from '../../orders/repository.js'
import type { Order } from '../../orders/schemas.js'
import { ApiError } from '../../shared/errors.js'
import type { Int64 } from '../../shared/int64.js'
import { V1_PREFIX } from '../common/routes.js'

/** What the store's operations share: an order as the API shows it, its path, and the answer of one that is not the caller's. */

const iso = (ms: number) => new Date(ms).toISOString()

/** An order as the API shows it. */
export function orderView(record: OrderRecord): Order {
  const view: Order = {
    id: record.id,
    petId: record.petId,
    status: record.status,
    createdAt: iso(record.createdAt),
    expiresAt: iso(record.expiresAt),
  }
  if (record.endedAt !== null) view.endedAt = iso(record.endedAt)
  return view
}

export const orderPath = (record: OrderRecord) => `${V1_PREFIX}/store/orders/${record.id}`

/** Another caller's order is answered as one that does not exist: its id confirms nothing. */
export const orderNotFound = (id: Int64) => new ApiError('not_found', `No order with id ${id}`)
