import { type Static, Type } from 'typebox'
import type { Int64 } from '../shared/int64.js'
import { ORDER_STATUSES, type OrderStatus } from './state.js'

/**
 * The store's shapes, one TypeBox schema each (validation, serialization, the OpenAPI document,
 * these types), with the examples the docs console's "Try it out" fills in.
 */

export const OrderStatusSchema = Type.Unsafe<OrderStatus>({
  $id: 'OrderStatus',
  title: 'OrderStatus',
  type: 'string',
  enum: [...ORDER_STATUSES],
  description:
    '`placed`: the animal is held (`pending`) until `expiresAt`; then one of `cancelled` (the animal is `available` again), ' +
    '`completed` (the animal is `sold`) or `expired` (the hold ran out; the animal is `available` again). Only a placed order changes.',
})
const orderStatus = Type.Unsafe<OrderStatus>({ $ref: 'OrderStatus' })

/** Validated by the int64 keyword (see http/validation.ts). */
const int64 = (description: string, extra: Record<string, unknown> = {}) =>
  Type.Unsafe<Int64>({ type: 'integer', format: 'int64', description, ...extra })

const time = (description: string, example: string) => Type.String({ format: 'date-time', description, example })

export const NewOrderSchema = Type.Object(
  {
    petId: int64('The animal to order: it must exist and be `available`.', { example: 1 }),
  },
  { $id: 'NewOrder', title: 'NewOrder', additionalProperties: false },
)
export type NewOrderBody = Static<typeof NewOrderSchema>

export const OrderSchema = Type.Object(
  {
    id: Type.Unsafe<number>({ type: 'integer', format: 'int64', description: 'Assigned by the service.', example: 1 }),
    petId: Type.Unsafe<number>({ type: 'integer', format: 'int64', description: 'The animal ordered.', example: 1 }),
    status: orderStatus,
    createdAt: time('When the order was placed.', '2026-11-21T12:00:30.000Z'),
    expiresAt: time(
      'When the hold ends: an order still `placed` then expires (ORDER_HOLD_MINUTES after it was placed).',
      '2026-11-21T12:30:30.000Z',
    ),
    endedAt: Type.Optional(
      time('When the order was cancelled, completed or expired; absent while it is placed.', '2026-11-21T12:05:00.000Z'),
    ),
  },
  { $id: 'Order', title: 'Order', additionalProperties: false },
)
export type Order = Static<typeof OrderSchema>

export const InventorySchema = Type.Object(
  {
    available: Type.Integer({ minimum: 0, description: 'Animals that can be ordered.', example: 12 }),
    pending: Type.Integer({ minimum: 0, description: 'Animals held by a placed order.', example: 1 }),
    sold: Type.Integer({ minimum: 0, description: 'Animals sold (their order completed).', example: 3 }),
  },
  {
    $id: 'Inventory',
    title: 'Inventory',
    additionalProperties: false,
    description:
      'Counts of animals by status, exact as of the last acknowledged change. An animal created without a status is not for sale: it is in none of them.',
  },
)
export type InventoryBody = Static<typeof InventorySchema>

export const OrderIdParams = Type.Object({ orderId: int64('The identifier of the order.', { example: 1 }) })
