import { Type } from 'typebox'
import type { EventType } from '../../events/event-types.js'
import { EventTypeSchema } from '../../events/schemas.js'

const nullableId = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

/** An event as operators read it: the public Event and whose it is. */
export const AdminEventSchema = Type.Object(
  {
    id: Type.String({ description: 'evt_…: unique and stable, the same wherever the event is shown or sent.' }),
    type: Type.Unsafe<EventType>({ $ref: 'EventType' }),
    timestamp: Type.String({ format: 'date-time', description: 'When it happened (RFC 3339, UTC).' }),
    customerId: nullableId('The customer it belongs to, or null.'),
    keyChainId: nullableId('The key chain it belongs to (the id of the chain’s first key), or null.'),
    keyId: nullableId('The key it is about or that made it, or null.'),
    data: Type.Object({}, { additionalProperties: true, description: 'The resource as the API shows it (never a secret).' }),
  },
  { $id: 'AdminEvent', title: 'AdminEvent', additionalProperties: false },
)

export const AdminEventPageSchema = Type.Object(
  {
    data: Type.Array(Type.Unsafe({ $ref: 'AdminEvent' })),
    nextAfter: Type.Union([Type.Integer(), Type.Null()], { description: 'The `after` of the next page, or null on the last.' }),
  },
  { $id: 'AdminEventPage', title: 'AdminEventPage', additionalProperties: false },
)

export { EventTypeSchema }
