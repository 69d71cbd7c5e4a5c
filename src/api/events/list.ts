import { Type } from 'typebox'
import { apiKeyOf } from '../../auth/admission.js'
import { insufficientScope } from '../../auth/api-key-credential.js'
import type { EventQuery } from '../../events/event.js'
import { EVENT_TYPES, type EventType, ORDER_EVENT_TYPES } from '../../events/event-types.js'
import { eventJson } from '../../events/payload.js'
import { EventSchema } from '../../events/schemas.js'
import { errorResponses, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { V1_PREFIX } from '../common/routes.js'
import { LIST_LIMIT, ref } from '../common/schemas.js'

export const ListEventsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: LIST_LIMIT.min,
        maximum: LIST_LIMIT.max,
        default: LIST_LIMIT.default,
        description: 'Maximum number of events returned (1 to 100; never clamped: out of range is 400).',
      }),
    ),
    type: Type.Optional(Type.Unsafe<EventType>({ $ref: 'EventType' })),
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'The events after this position of the log. Clients follow the Link rel="next" header rather than building it.',
      }),
    ),
  },
  { additionalProperties: false },
)

const NOT_ORDERS: readonly EventType[] = EVENT_TYPES.filter((t) => !ORDER_EVENT_TYPES.includes(t))

/** GET /events (listEvents): the caller's events, oldest first. */
export function listEvents(app: PublicApp, { events, linkBase }: PublicRoutesOptions): void {
  app.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'List your events',
        description:
          'Returns up to `limit` events of the caller, oldest first: those of its customer (every key of it) or, for a key without one, those of its key chain (the key and the keys it was rotated from or to). ' +
          'An event is written in the same transaction as the change it tells of, and kept `EVENT_RETENTION_DAYS` (30 days unless the operator chose otherwise). ' +
          'When more exist, a `Link: <...>; rel="next"` header gives the next page; a client that polls keeps the last page\'s link and asks it again later. ' +
          'A listing never skips an event that commits after a newer one: on PostgreSQL it shows the events only up to the oldest write still in progress on the database (it waits up to a second for such writes), and the rest in the next page. ' +
          'Any key may call it (it needs no scope), but order events (`order.*`) need `orders:read`, as the orders do: without it they are left out of the listing, and asking for one with `type=order.…` is 403 `insufficient_scope` naming `orders:read`. ' +
          'Counted against the quota like any request.',
        tags: ['events'],
        querystring: ListEventsQuery,
        response: {
          200: {
            description: 'Success: an array of events, oldest first.',
            type: 'array',
            items: ref(EventSchema),
            headers: {
              ...rateLimitHeaderDocs,
              Link: { type: 'string', description: 'rel="next": the next page, present only when more events may exist.' },
            },
          },
          ...errorResponses(400, 401, 'insufficient_scope', 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = LIST_LIMIT.default, type, after } = request.query
      const key = apiKeyOf(request)
      const ordersShown = key.scopes.includes('orders:read')
      if (type !== undefined && !ordersShown && ORDER_EVENT_TYPES.includes(type)) throw insufficientScope(request, key, 'orders:read')
      const query: EventQuery = { limit, after }
      if (key.customerId !== null) query.customerId = key.customerId
      else query.keyChainId = key.quotaId
      if (type !== undefined) query.types = [type]
      else if (!ordersShown) query.types = NOT_ORDERS
      const page = await events.list(query)
      if (page.nextAfter !== null) {
        const filter = type === undefined ? '' : `&type=${type}`
        reply.header('link', `<${linkBase}${V1_PREFIX}/events?limit=${limit}${filter}&after=${page.nextAfter}>; rel="next"`)
      }
      // Written as stored (payload.ts): an event's data keeps its int64 fields exact.
      const body = `[${page.events.map((e) => eventJson(e)).join(',')}]`
      return reply.type('application/json; charset=utf-8').send(body as never)
    },
  )
}
