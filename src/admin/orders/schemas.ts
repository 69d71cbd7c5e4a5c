import { Type } from 'typebox'
import { ORDER_STATUSES, type OrderStatus } from '../../orders/state.js'
import { keyId, nullableTime, time } from '../common/schemas.js'

/** The order as every operation of the orders resource answers it: the store's order, with whose it is. */

export const tags = ['orders']

export const orderStatus = Type.Unsafe<OrderStatus>({
  type: 'string',
  enum: [...ORDER_STATUSES],
  description: '`placed` (the animal is held), or why it ended: `cancelled`, `completed` or `expired` (the hold ran out).',
})

const int64 = (description: string) => Type.Unsafe<number>({ type: 'integer', format: 'int64', description })

export const AdminOrderSchema = Type.Object(
  {
    id: int64('The order id (as on /v1).'),
    petId: int64('The animal ordered.'),
    status: orderStatus,
    owner: Type.String({ description: 'Whose order it is: the quota it belongs to (its owner on /v1; opaque).' }),
    keyId: keyId('The API key that placed it.'),
    keyName: Type.Union([Type.String(), Type.Null()], {
      description: 'The name of that key, as it is now (null: no such key in this store).',
    }),
    customerId: Type.Union([Type.String(), Type.Null()], {
      description:
        'The customer of that key (cus_…), whose order it is: every key of the customer sees it on /v1. null: a key without a customer.',
    }),
    createdAt: time('When it was placed.'),
    expiresAt: time('When its hold ends: still placed then, it expires.'),
    endedAt: nullableTime('When it was cancelled, completed or expired (its status says which); null while placed.'),
  },
  { $id: 'AdminOrder', title: 'AdminOrder', additionalProperties: false },
)

/** The /v1 path parameter (the int64 keyword parses it alike on both listeners). */
export { OrderIdParams } from '../../orders/schemas.js'
