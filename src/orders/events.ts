import type { RecordedChange } from '../changes/audit-log.js'
import { NOTHING_RECORDED, withEvents } from '../changes/change-recorder.js'
import { type EventDraft, eventDraft } from '../events/event.js'
import type { EventType } from '../events/event-types.js'
import { ordersOwnerOf } from '../keys/api-key.js'
import type { OrderRecord, OrderRecording } from './repository.js'
import type { OrderStatus } from './state.js'
import { orderView } from './view.js'

const EVENT_OF: Record<OrderStatus, EventType> = {
  placed: 'order.placed',
  completed: 'order.completed',
  cancelled: 'order.cancelled',
  expired: 'order.expired',
}

/**
 * The event of an order as it was just changed (its status says which): the order as the API shows
 * it, its owner's (its customer, or the key chain that placed it), at the change's own time.
 */
export function orderEvent(order: OrderRecord): EventDraft {
  const owner = { ...ordersOwnerOf(order.owner), keyId: order.keyId }
  return eventDraft(EVENT_OF[order.status], owner, order.endedAt ?? order.createdAt, orderView(order))
}

/**
 * What a store writes of each order it changes, in the transaction that changes it: what the call
 * records (`recorded`, an operator's audit entry) and the order's event, always. The stores call it
 * wherever an order changes (placed, completed, cancelled, expired by the sweep or found expired on
 * the way), so every change has its event exactly once, whoever asked for it.
 */
export const orderChange = (order: OrderRecord, recorded: OrderRecording | undefined): RecordedChange =>
  withEvents(recorded?.(order) ?? NOTHING_RECORDED, orderEvent(order))
