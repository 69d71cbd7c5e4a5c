import { Type } from 'typebox'
import type { EventLogService } from '../../changes/event-log-service.js'
import type { EventType } from '../../events/event-types.js'
import { eventJson } from '../../events/payload.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, errorResponses, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, pageLimit, ref } from '../common/schemas.js'
import { AdminEventPageSchema } from './schemas.js'

export const ListAnyEventsQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'The events after this position of the log (`nextAfter`).',
      }),
    ),
    type: Type.Optional(Type.Unsafe<EventType>({ $ref: 'EventType' })),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the events of this customer (cus_…).' })),
    keyId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the events about or made by this key (key_…).' })),
  },
  { additionalProperties: false },
)

/** What the events resource needs: the event log's reader. */
export interface AdminEventsOptions {
  eventLog: EventLogService
}

/** GET /events (listAnyEvents). */
export function listAnyEvents(app: AdminApp, { eventLog }: AdminEventsOptions): void {
  app.get(
    '/events',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listAnyEvents',
        summary: 'List the event log',
        description:
          "Every caller's events, in the log's order: what clients see of their own at GET /v1/events, with whose each one is (`customerId`, `keyChainId`: the first key of the chain, `keyId`). " +
          'Filtered by type, customer and key (combined with AND), paged with `after` (`nextAfter`, and a Link rel="next" that keeps the filters); as GET /v1/events, a page never passes a write still in progress on PostgreSQL. Kept EVENT_RETENTION_DAYS. ' +
          'This listing is itself recorded in the audit log (`event.list`), after it is read, with its filters.',
        tags: ['events'],
        querystring: ListAnyEventsQuery,
        response: {
          200: { description: 'A page of events.', ...ref(AdminEventPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, type, customerId, keyId } = request.query
      const query = { limit, after, customerId, keyId, ...(type === undefined ? {} : { types: [type] }) }
      const page = await eventLog.list(query, changeContext(request))
      if (page.nextAfter !== null)
        reply.header('link', link(`${ADMIN_PREFIX}/events`, { limit, type, customerId, keyId, after: page.nextAfter }))
      // Written as stored (events/payload.ts): an event's data keeps its int64 fields exact.
      const data = page.events.map((e) => eventJson(e, true)).join(',')
      return reply.type('application/json; charset=utf-8').send(`{"data":[${data}],"nextAfter":${page.nextAfter}}` as never)
    },
  )
}
