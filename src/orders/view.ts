import type { OrderRecord } from './repository.js'
import type { Order } from './schemas.js'

const iso = (ms: number) => new Date(ms).toISOString()

/** An order as the API shows it: its answers (api/orders/views.ts) and its events' `data` alike. */
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
