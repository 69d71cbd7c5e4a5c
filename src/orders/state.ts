import type { PetStatus } from '../pets/schemas.js'

/**
 * The state machines of orders and of animals, written once. Each change of an order moves its
 * animal in the same transaction, and both stores enforce the table below with conditional
 * UPDATEs (`storage/order-sql.ts`: `… WHERE id = ? AND status = <from>`), so that a change whose
 * `from` no longer holds changes nothing, whatever else runs at the same moment:
 *
 *   order   (new) --place--> placed --cancel---> cancelled
 *                                   --complete-> completed
 *                                   --expire---> expired      (the hold ran out)
 *   animal  available --place--> pending --cancel, expire--> available
 *                                        --complete--------> sold
 *
 * An animal an order made `pending` stays so exactly while that order is `placed` (a partial
 * unique index allows one placed order per animal); `sold` is final. An animal created `pending`
 * or `sold` (POST /v1/pets takes any status) or without a status is not for sale: no change
 * applies to it, so no order holds or frees it.
 */
export const ORDER_STATUSES = ['placed', 'cancelled', 'completed', 'expired'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

export type OrderChange = 'place' | 'cancel' | 'complete' | 'expire'

export interface Transition {
  /** The order's status before (undefined: the order is new) and after. */
  order: { from: OrderStatus | undefined; to: OrderStatus }
  /** The animal's status before and after, in the same transaction. */
  pet: { from: PetStatus; to: PetStatus }
}

export const TRANSITIONS = {
  place: { order: { from: undefined, to: 'placed' }, pet: { from: 'available', to: 'pending' } },
  cancel: { order: { from: 'placed', to: 'cancelled' }, pet: { from: 'pending', to: 'available' } },
  complete: { order: { from: 'placed', to: 'completed' }, pet: { from: 'pending', to: 'sold' } },
  expire: { order: { from: 'placed', to: 'expired' }, pet: { from: 'pending', to: 'available' } },
} as const satisfies Record<OrderChange, Transition>

/** The changes a client asks for by name (POST /v1/store/orders/{orderId}/cancel, …/complete). */
export type ClientChange = 'cancel' | 'complete'

/** The one status from which an order can change; every other is final. */
export const OPEN_STATUS = 'placed' satisfies OrderStatus

/** A placed order is due to expire from its `expiresAt` on: a change at or after it sees the order expired. */
export const isDue = (expiresAt: number, now: number): boolean => expiresAt <= now
