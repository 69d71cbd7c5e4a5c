import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { customerId, ref } from '../common/schemas.js'
import { AdminWebhookEndpointSchema, type AdminWebhookEndpointsOptions, description, endpointUrl, events, secret, tags } from './schemas.js'
import { endpointWithSecretJson } from './views.js'

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: endpointUrl,
    events,
    customerId: Type.Optional(customerId('Only this customer’s events (its orders, its keys); absent: every event.')),
    description: Type.Optional(description),
  },
  { $id: 'CreateWebhookEndpoint', title: 'CreateWebhookEndpoint', additionalProperties: false },
)
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>

export const WebhookEndpointWithSecretSchema = Type.Object(
  { secret, endpoint: ref(AdminWebhookEndpointSchema) },
  { $id: 'WebhookEndpointWithSecret', title: 'WebhookEndpointWithSecret', additionalProperties: false },
)

/** POST /webhook-endpoints (createWebhookEndpoint). */
export function createWebhookEndpoint(app: AdminApp, { webhookEndpoints }: AdminWebhookEndpointsOptions): void {
  app.post(
    '/webhook-endpoints',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'Subscribes a URL to event types (or `["*"]`: all), of one customer (`customerId`) or of every caller. Enabled at once. ' +
          'The answer holds its signing secret (`whsec_…`) this once: the receiver verifies every delivery with it. ' +
          'A URL that is not `https`, carries credentials, or points (or resolves) at a non-public address is 400 naming `url`, with why. ' +
          'Written to the audit log (`webhook_endpoint.create`, never the secret).',
        tags,
        body: ref(CreateWebhookEndpointBody),
        response: {
          201: {
            description: 'Created; `secret` is shown only this once.',
            ...ref(WebhookEndpointWithSecretSchema),
            headers: {
              ...rateLimitHeaderDocs,
              Location: { type: 'string', description: 'Path of the new endpoint, /admin/v1/webhook-endpoints/{endpointId}.' },
            },
          },
          ...errorResponses(400, 401, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const created = await webhookEndpoints.createEndpoint(request.body, changeContext(request))
      return reply.code(201).header('location', `${ADMIN_PREFIX}/webhook-endpoints/${created.id}`).send(endpointWithSecretJson(created))
    },
  )
}
