import { type Static, Type } from 'typebox'
import { EVENT_TYPES, type EventType } from './event-types.js'

/** The event log's shapes, for the APIs' documents (the answers themselves are written by payload.ts). */

export const EventTypeSchema = Type.Unsafe<EventType>({
  $id: 'EventType',
  title: 'EventType',
  type: 'string',
  enum: [...EVENT_TYPES],
  description: 'What happened: the closed list of event types (docs/events.md says what each one’s `data` holds).',
})

export const EventSchema = Type.Object(
  {
    id: Type.String({
      pattern: '^evt_[0-9A-Za-z]+$',
      description: 'Unique and stable: the same wherever the event is shown or sent.',
      example: 'evt_0VbbmCTAR6PPVIuTZIeKzLgz',
    }),
    type: Type.Unsafe<EventType>({ $ref: 'EventType' }),
    timestamp: Type.String({ format: 'date-time', description: 'When it happened (RFC 3339, UTC).', example: '2026-11-21T12:00:30.000Z' }),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'The resource as the API shows it, as it was when the event happened: an Order for `order.*`, a Pet for `pet.created`, a key (without its secret) for `key.*`. Never a secret.',
      },
    ),
  },
  { $id: 'Event', title: 'Event', additionalProperties: false },
)
export type EventView = Static<typeof EventSchema>
