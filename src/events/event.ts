import { timeOrderedId } from '../shared/base62.js'
import type { EventType } from './event-types.js'

/**
 * The event log: what happened that a client or an operator may want told (an order placed, a key
 * revoked), one row per event, written by the stores in the transaction of the change it describes
 * (an outbox: changes/audit-log.ts's RecordedChange carries it), so that no change commits without
 * its event nor an event without its change. Times are Unix ms; the APIs show them as RFC 3339.
 */

/**
 * Whose an event is: the customer it belongs to, else the key chain (the first key of a rotation
 * chain, whose id is every key of the chain's `quotaId`), and the key that made it happen or that
 * it is about. GET /v1/events shows a caller its customer's events, or its chain's without one.
 */
export interface EventOwner {
  customerId: string | null
  keyChainId: string | null
  keyId: string | null
}

/** An event to write; the store gives it its seq. */
export interface EventDraft extends EventOwner {
  /** `evt_…`: unique, the time it was made then random characters (sorting by when it was made), the same wherever the event is shown or sent. */
  id: string
  type: EventType
  occurredAt: number
  /** The resource as the API shows it (never a secret); written as JSON text. */
  data: object
  /**
   * When set, at most one event with this value is ever written, by any instance: a usage
   * threshold of one window, one ban. A later one with the same value is dropped without error.
   */
  onceKey?: string
}

/** An event as read: its `data` is the JSON text it was written as (int64 fields exact), shown as it is. */
export interface EventRecord extends EventOwner {
  seq: number
  id: string
  type: EventType
  occurredAt: number
  data: string
}

export const newEventId = (occurredAt: number): string => timeOrderedId('evt_', occurredAt)

export function eventDraft(type: EventType, owner: EventOwner, occurredAt: number, data: object, onceKey?: string): EventDraft {
  const draft: EventDraft = { id: newEventId(occurredAt), type, occurredAt, data, ...owner }
  if (onceKey !== undefined) draft.onceKey = onceKey
  return draft
}

export interface EventQuery {
  limit: number
  /** seq cursor: only events after it, oldest first. */
  after?: number
  /** Only these types (none: every type). */
  types?: readonly EventType[]
  customerId?: string
  keyChainId?: string
  keyId?: string
}

export interface EventPage {
  events: EventRecord[]
  /** The seq to ask for the next page after, when there may be one. */
  nextAfter: number | null
}

/** Storage of the event log (`Storage.events`): written by each store's writeChange only; read and swept here. */
export interface EventRepository {
  /** A page in seq order (oldest first). */
  list(query: EventQuery): Promise<EventPage>
  /** Deletes up to `limit` events that occurred before `before` (oldest first), in one transaction; how many. */
  deleteBefore(before: number, limit: number): Promise<number>
}
