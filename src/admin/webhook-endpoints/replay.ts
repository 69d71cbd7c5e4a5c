import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref, time } from '../common/schemas.js'
import { parseTime } from '../common/views.js'
import { type AdminWebhookEndpointsOptions, EndpointIdParams, notFoundDoc, tags } from './schemas.js'

export const ReplayWebhookEndpointBody = Type.Object(
  { since: time('Every event the endpoint receives that occurred at or after this time (RFC 3339) is sent again.') },
  { $id: 'ReplayWebhookEndpoint', title: 'ReplayWebhookEndpoint', additionalProperties: false },
)
export type ReplayWebhookEndpointBody = Static<typeof ReplayWebhookEndpointBody>

export const WebhookReplaySchema = Type.Object(
  { enqueued: Type.Integer({ minimum: 0, description: 'How many deliveries were made due now.' }) },
  { $id: 'WebhookReplay', title: 'WebhookReplay', additionalProperties: false },
)

/** POST /webhook-endpoints/{endpointId}/replay (replayWebhookEndpoint). */
export function replayWebhookEndpoint(app: AdminApp, { webhookDeliveries }: AdminWebhookEndpointsOptions): void {
  app.post(
    '/webhook-endpoints/:endpointId/replay',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'replayWebhookEndpoint',
        summary: 'Send a webhook endpoint’s events again, since a time',
        description:
          'Every event since `since` (still in the event log: EVENT_RETENTION_DAYS) that the endpoint receives (its types, its customer) is made due now: ' +
          'its delivery again, whatever its status, or a new one for an event it was never sent (one that happened while it was disabled). ' +
          'A running server sends them, oldest first; a receiver that already had one sees its `webhook-id` again. A disabled endpoint is 409 (enable it first). ' +
          'Recorded in the audit log (`webhook_endpoint.replay`).',
        tags,
        params: EndpointIdParams,
        body: ref(ReplayWebhookEndpointBody),
        response: {
          202: { description: 'Made due; the attempts follow.', ...ref(WebhookReplaySchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
          ...notFoundDoc,
          409: { ...errorResponses(409)[409], description: 'The endpoint is disabled: enable it first. Code: `conflict`.' },
        },
      },
    },
    async (request, reply) => {
      const since = parseTime('since', request.body.since) as number
      const enqueued = await webhookDeliveries.replay(request.params.endpointId, since, changeContext(request))
      return reply.code(202).send({ enqueued })
    },
  )
}
