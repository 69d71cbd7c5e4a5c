import type { RecordedChange } from '../changes/audit-log.js'
import type { IdempotencyClaim } from '../idempotency/claim.js'
import type { PetStatus } from '../pets/schemas.js'
import type { Int64 } from '../shared/int64.js'
import type { HoldEnds } from './hold.js'
import type { ClientChange, OrderStatus } from './state.js'

/** An order as stored. Times are epoch ms. */
export interface OrderRecord {
  id: number
  petId: number
  status: OrderStatus
  /** Whose order it is: opaque (`orderOwner` in keys/api-key.ts); only its owner sees it through the public API. */
  owner: string
  /** The API key that placed it (for operators: a page of a key's orders). */
  keyId: string
  createdAt: number
  /** When the hold ends: a `placed` order still placed then expires. */
  expiresAt: number
  /** When it was cancelled, completed or expired; null while placed. */
  endedAt: number | null
  /** Moves at every change of the order (an ETag can be made of it). */
  version: number
}

export interface NewOrder {
  petId: Int64
  owner: string
  keyId: string
  /** When the hold ends (hold.ts), from the time of the placement the store's clock says. */
  holdEnds: HoldEnds
}

export type PlaceOutcome =
  /** The animal was available: it is pending now, held by this order (and the claim recorded, if any). */
  | { outcome: 'placed'; order: OrderRecord }
  /** No animal has this id: nothing changed. */
  | { outcome: 'unknown_pet' }
  /** The animal is not available (its status, null when it has none): nothing changed. */
  | { outcome: 'not_available'; petStatus: PetStatus | null }
  /** The Idempotency-Key placed an order before, with the same body: that order (as it is now). */
  | { outcome: 'replayed'; order: OrderRecord }
  /** The Idempotency-Key was used before with another body or on another operation: nothing changed. */
  | { outcome: 'reused' }
  /** Another transaction (another instance) holds the same Idempotency-Key right now: nothing changed. */
  | { outcome: 'in_flight' }

export type ChangeOutcome =
  /** The order was placed and is changed now, its animal with it. */
  | { outcome: 'changed'; order: OrderRecord }
  /** No such order (of this owner). */
  | { outcome: 'not_found' }
  /** The order is not placed (any more): nothing changed; the order as it is, its status says why. */
  | { outcome: 'not_placed'; order: OrderRecord }

export interface ListOrdersOptions {
  limit: number
  /** Only this owner's orders (the public API always sets it); undefined: everyone's (operators). */
  owner?: string
  /** Only the orders placed with this API key (operators). */
  keyId?: string
  status?: OrderStatus
  /** Keyset paging: only the ids past this one in the listing's order (greater ascending, smaller descending). */
  afterId?: Int64
  /** `desc`: newest first (highest id first); ascending otherwise. */
  order?: 'asc' | 'desc'
}

/** Counts of animals by status; an animal without a status is in none. */
export type Inventory = Record<PetStatus, number>

/**
 * What a call records of each order it changes beside the order's own event, made from the order as
 * changed (its status says how: `placed`, `completed`, `cancelled`, or `expired`, the hold that ran
 * out on the way) and written in the call's transaction (changes/): an operator's cancel has its
 * audit entry; a client's change nothing more (absent). The order's event the store adds itself,
 * whoever called (orders/events.ts, `orderChange`).
 */
export type OrderRecording = (order: OrderRecord) => RecordedChange

export interface ChangeOptions {
  owner?: string
  recorded?: OrderRecording
}

/**
 * Storage of orders, and of the animals' statuses they change: every method is one transaction
 * that applies TRANSITIONS (state.ts) with conditional updates, so that under any concurrency an
 * animal is reserved by one order at most and each order ends once. A placed order whose hold ran
 * out (`expiresAt <= now`) is expired by whichever comes first: the sweep (`expireDue`), or a
 * change that needs it (a cancel or complete of it, a new order for its animal).
 *
 * Whose clock: the store's, one for every instance that uses it. A placement's `createdAt` and
 * `expiresAt`, a change's `endedAt` and every "is the hold over" are read from it in the change's
 * own transaction, never from the calling instance: on PostgreSQL the database's (`now()`, the
 * transaction's start), which every instance shares whatever its own clock says; on SQLite the
 * clock of the machine that holds the file (every process on it reads the same one). Callers pass
 * no time.
 */
export interface OrderRepository {
  /**
   * Reserves the animal and writes the order; under a claim, the Idempotency-Key record with it;
   * with `recorded`, what it records of the order placed (and of an order of the animal it expired first).
   */
  placeOrder(order: NewOrder, claim?: IdempotencyClaim, recorded?: OrderRecording): Promise<PlaceOutcome>
  /**
   * Cancels or completes order `id` (of `owner`, when given), after expiring it if it is due now;
   * with `recorded`, what it records of each order changed (the expired one too) is written in the
   * same transaction: no change without its record, nor the reverse.
   */
  changeOrder(id: Int64, change: ClientChange, options: ChangeOptions): Promise<ChangeOutcome>
  /** The order, if it exists (and is `owner`'s, when given). */
  getOrder(id: Int64, options?: { owner?: string }): Promise<OrderRecord | undefined>
  /** Ascending id order, or descending with `order: 'desc'`. */
  listOrders(options: ListOrdersOptions): Promise<OrderRecord[]>
  /** Expires up to `limit` placed orders due now (the store's clock), each with its animal and what `recorded` makes of it; resolves with how many. */
  expireDue(limit: number, recorded?: OrderRecording): Promise<number>
  /** Counts of animals by status, exact as of the last commit. */
  inventory(): Promise<Inventory>
}
