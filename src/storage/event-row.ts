import type { EventDraft, EventRecord } from '../events/event.js'
import type { EventType } from '../events/event-types.js'
import { eventDataText } from '../events/payload.js'

/** An events row as both stores return it. */
export interface EventRow {
  seq: number | string
  id: string
  type: EventType
  occurred_at: number | string
  data: string
  customer_id: string | null
  key_chain_id: string | null
  key_id: string | null
}

export const EVENT_READ_COLUMNS = 'seq, id, type, occurred_at, data, customer_id, key_chain_id, key_id'

export const toEventRecord = (r: EventRow): EventRecord => ({
  seq: Number(r.seq),
  id: r.id,
  type: r.type,
  occurredAt: Number(r.occurred_at),
  data: r.data,
  customerId: r.customer_id,
  keyChainId: r.key_chain_id,
  keyId: r.key_id,
})

/** The columns an event is written to, and its values in their order: for each store's `writeChange` only. */
export const EVENT_COLUMNS = 'id, type, occurred_at, data, customer_id, key_chain_id, key_id, once_key'

export const eventValues = (e: EventDraft): unknown[] => [
  e.id,
  e.type,
  e.occurredAt,
  eventDataText(e.data),
  e.customerId,
  e.keyChainId,
  e.keyId,
  e.onceKey ?? null,
]
