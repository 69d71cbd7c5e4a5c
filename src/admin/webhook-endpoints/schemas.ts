import { type Static, Type } from 'typebox'
import { NOT_BLANK } from '../../http/validation.js'
import { HIDDEN_CHARACTERS_TEXT, NO_CONTROL_CHARACTERS } from '../../shared/control-characters.js'
import type { WebhookDeliveryService } from '../../webhooks/delivery-service.js'
import { DISABLED_REASONS, WEBHOOK_ENDPOINT_ID_PATTERN } from '../../webhooks/endpoint.js'
import type { WebhookEndpointService } from '../../webhooks/endpoint-service.js'
import { MAX_DESCRIPTION_LENGTH, MAX_URL_LENGTH } from '../../webhooks/endpoint-validation.js'
import { ALL_EVENTS, WEBHOOK_EVENT_TYPES } from '../../webhooks/event-types.js'
import { WEBHOOK_SECRET_PREFIX } from '../../webhooks/secret.js'
import { errorResponses } from '../common/routes.js'
import { nullableTime, time } from '../common/schemas.js'

/** The webhook endpoint as every operation answers it, and the fields the operations that write one read. */

export const tags = ['webhook endpoints']

/** What the webhook endpoints resource needs beside the others: the webhook endpoint service, and its delivery log's. */
export interface AdminWebhookEndpointsOptions {
  webhookEndpoints: Pick<
    WebhookEndpointService,
    'createEndpoint' | 'listEndpoints' | 'getEndpoint' | 'updateEndpoint' | 'deleteEndpoint' | 'rotateSecret'
  >
  webhookDeliveries: Pick<WebhookDeliveryService, 'listDeliveries' | 'getDelivery' | 'retryDelivery' | 'replay'>
}

export const EndpointIdParams = Type.Object({
  endpointId: Type.String({ pattern: WEBHOOK_ENDPOINT_ID_PATTERN, description: 'The webhook endpoint id (we_…).' }),
})

export const endpointUrl = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  pattern: NO_CONTROL_CHARACTERS,
  description:
    `Where the events are sent (a POST each): an absolute \`https\` URL, at most ${MAX_URL_LENGTH} characters, without a user name or password, whose host is, and resolves only to, public addresses ` +
    '(not loopback, private, link-local such as 169.254.169.254, unique-local, multicast or otherwise reserved, in any spelling: IPv4, IPv6, IPv4-mapped, decimal, hex or octal). ' +
    'A server started with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true also takes `http` and any address (development and tests). Kept as the URL parser writes it (`https://hooks.example.com/in`).',
  example: 'https://hooks.example.com/animal-store',
})

const eventType = Type.Unsafe<string>({ type: 'string', enum: [...WEBHOOK_EVENT_TYPES, ALL_EVENTS] })
export const events = Type.Array(eventType, {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: `The event types it receives, each once: any of ${WEBHOOK_EVENT_TYPES.join(', ')}; or \`["*"]\` alone: every type, those added later included.`,
  example: ['order.placed', 'order.completed'],
})

export const description = Type.Unsafe<string | null>({
  anyOf: [
    {
      type: 'string',
      minLength: 1,
      maxLength: MAX_DESCRIPTION_LENGTH,
      pattern: NOT_BLANK,
      allOf: [{ pattern: NO_CONTROL_CHARACTERS }],
    },
    { type: 'null' },
  ],
  description: `What it is for, for the operator: 1 to ${MAX_DESCRIPTION_LENGTH} characters, not only white space, no control characters, no text-direction or invisible characters (${HIDDEN_CHARACTERS_TEXT}); null: none.`,
  example: 'Warehouse: ship sold animals',
})

export const AdminWebhookEndpointSchema = Type.Object(
  {
    id: Type.String({ description: 'Endpoint id (we_…).' }),
    url: Type.String({ description: 'Where the events are sent.' }),
    description: Type.Union([Type.String(), Type.Null()], { description: 'What it is for, or null.' }),
    events: Type.Array(Type.String(), { description: 'The event types it receives, in the list’s order, or `["*"]`: every type.' }),
    customerId: Type.Union([Type.String(), Type.Null()], {
      description: 'Only this customer’s events (its orders, its keys); null: every event.',
    }),
    enabled: Type.Boolean({ description: 'Whether events are sent to it.' }),
    disabledReason: Type.Union(
      [Type.Unsafe<(typeof DISABLED_REASONS)[number]>({ type: 'string', enum: [...DISABLED_REASONS] }), Type.Null()],
      {
        description:
          'Why it is disabled: `manual` (an operator), `gone` (its receiver answered 410), `failing` (its deliveries failed for too long); null while enabled.',
      },
    ),
    failingSince: nullableTime('Since when its deliveries have failed without a success in between; null when they do not.'),
    previousSecretExpiresAt: nullableTime(
      'After a rotation: until when the previous secret signs beside the current one (each delivery carries both signatures until then; a time past: it no longer does); null when there was no rotation, or it ended the previous secret at once.',
    ),
    createdAt: time('When it was created.'),
    updatedAt: time('When it was last changed.'),
  },
  {
    $id: 'AdminWebhookEndpoint',
    title: 'AdminWebhookEndpoint',
    additionalProperties: false,
    description:
      'A webhook endpoint: the events it subscribes to are sent to its URL, signed with its secret (Standard Webhooks). The secret is never shown here: only in the answers that make one.',
  },
)
export type AdminWebhookEndpoint = Static<typeof AdminWebhookEndpointSchema>

/** The secret as the answers that make one show it, this once. */
export const secret = Type.String({
  description: `The signing secret (${WEBHOOK_SECRET_PREFIX}…, the Standard Webhooks form): shown only this once. Give it to the receiver, which verifies each delivery with it (\`new Webhook(secret)\` of the standardwebhooks package).`,
  example: `${WEBHOOK_SECRET_PREFIX}MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2P7Ve9Fh5xk=`,
})

/** The 404 of an operation on one endpoint, in its own words (the admin API's default speaks of keys). */
export const notFoundDoc = {
  404: { ...errorResponses(404)[404], description: 'No webhook endpoint with that id. Code: `not_found`.' },
}
