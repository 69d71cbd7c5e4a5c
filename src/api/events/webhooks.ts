import { EVENT_TYPES, type EventType } from '../../events/event-types.js'

/**
 * The `webhooks` section of the public document (OpenAPI 3.1): for each type of the event log's
 * closed list, the payload a subscriber is sent, `{type, timestamp, data}`, its `data` schema and
 * an example. The same `data` is what GET /v1/events lists.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const time = (description: string) => ({ type: 'string', format: 'date-time', description })
const nullable = (type: string, description: string) => ({ type: [type, 'null'], description })
const T = '2026-11-21T12:00:30.000Z'

const KEY = {
  type: 'object',
  description: 'The key as the admin API shows it (never its secret: only its prefix), as it is after the change.',
  required: ['id', 'name', 'plan', 'prefix', 'quotaId', 'customerId', 'scopes', 'state', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', description: 'key_…' },
    name: { type: 'string' },
    plan: { type: 'string', enum: ['free', 'pro', 'business', 'enterprise'] },
    perMinute: { type: 'integer' },
    perDay: { type: 'integer' },
    prefix: { type: 'string', description: 'The first characters of the key: enough to recognise it, never to use it.' },
    quotaId: { type: 'string', description: 'The quota it counts against: its customer, or the first key of its rotation chain.' },
    customerId: nullable('string', 'Its customer (cus_…), or null.'),
    scopes: { type: 'array', items: { type: 'string' } },
    state: { type: 'string', enum: ['active', 'expired', 'revoked', 'rotated'] },
    createdAt: time('When it was created.'),
    updatedAt: time('When it last changed.'),
    expiresAt: nullable('string', 'When it expires (RFC 3339), or null.'),
    revokedAt: nullable('string', 'When it was revoked (RFC 3339), or null.'),
    rotatedTo: nullable('string', 'The key it was rotated to, or null.'),
    rotatedFrom: nullable('string', 'The key it replaced, or null.'),
    metadata: { type: ['object', 'null'], description: 'The operator’s JSON object, or null.' },
    lastUsedAt: nullable('string', 'Its last use (RFC 3339), or null.'),
  },
}
const KEY_EXAMPLE = {
  id: 'key_4CqW2n7dPz9LmR1s',
  name: 'shop backend',
  plan: 'pro',
  perMinute: 600,
  perDay: 100000,
  prefix: 'as_live_Ab3x',
  quotaId: 'cus_7Hk2Lm9PqR4sT1vW',
  customerId: 'cus_7Hk2Lm9PqR4sT1vW',
  scopes: ['pets:read', 'pets:write', 'orders:read', 'orders:write'],
  state: 'active',
  createdAt: T,
  updatedAt: T,
  expiresAt: null,
  revokedAt: null,
  rotatedTo: null,
  rotatedFrom: null,
  metadata: null,
  lastUsedAt: null,
}
const QUOTA_FIELDS = {
  quotaId: nullable('string', 'The quota concerned: the customer, or the first key of the rotation chain.'),
  customerId: nullable('string', 'Its customer, or null.'),
  keyId: nullable('string', 'The key whose request passed the threshold or started the ban.'),
}

const PAYLOADS: Record<EventType, { summary: string; data: object; example: object }> = {
  'pet.created': {
    summary: 'An animal was added (createPet).',
    data: ref('Pet'),
    example: { id: 1, name: 'Rex', categoryId: 7, status: 'available' },
  },
  'order.placed': {
    summary: 'An order was placed: its animal is pending until the order ends.',
    data: ref('Order'),
    example: { id: 1, petId: 1, status: 'placed', createdAt: T, expiresAt: '2026-11-21T12:30:30.000Z' },
  },
  'order.completed': {
    summary: 'An order was completed: its animal is sold.',
    data: ref('Order'),
    example: {
      id: 1,
      petId: 1,
      status: 'completed',
      createdAt: T,
      expiresAt: '2026-11-21T12:30:30.000Z',
      endedAt: '2026-11-21T12:05:00.000Z',
    },
  },
  'order.cancelled': {
    summary: 'An order was cancelled (by its owner or an operator): its animal is available again.',
    data: ref('Order'),
    example: {
      id: 1,
      petId: 1,
      status: 'cancelled',
      createdAt: T,
      expiresAt: '2026-11-21T12:30:30.000Z',
      endedAt: '2026-11-21T12:05:00.000Z',
    },
  },
  'order.expired': {
    summary: 'An order’s hold ran out before it was completed or cancelled: its animal is available again. Told once, whoever found it.',
    data: ref('Order'),
    example: {
      id: 1,
      petId: 1,
      status: 'expired',
      createdAt: T,
      expiresAt: '2026-11-21T12:30:30.000Z',
      endedAt: '2026-11-21T12:30:30.000Z',
    },
  },
  'key.created': { summary: 'An API key was created.', data: KEY, example: KEY_EXAMPLE },
  'key.rotated': {
    summary: 'An API key was rotated: `data` is the old key, whose `rotatedTo` names its successor.',
    data: KEY,
    example: { ...KEY_EXAMPLE, state: 'rotated', rotatedTo: 'key_9ZxY8wV7uT6sR5qP', expiresAt: '2026-11-22T12:00:30.000Z' },
  },
  'key.revoked': {
    summary: 'An API key was revoked (one event for each key a revocation takes along its rotation chain).',
    data: KEY,
    example: { ...KEY_EXAMPLE, state: 'revoked', revokedAt: T },
  },
  'key.leak_reported': {
    summary: 'A secret scanner reported the key found in public; a `key.revoked` follows when the service revokes it.',
    data: KEY,
    example: KEY_EXAMPLE,
  },
  'key.usage_threshold': {
    summary: 'A quota’s day window (a customer’s, or a key chain’s) passed 80% or 100%: once per window and threshold.',
    data: {
      type: 'object',
      required: ['quotaId', 'customerId', 'keyId', 'window', 'threshold', 'limit', 'used', 'windowStart', 'resetAt'],
      properties: {
        ...QUOTA_FIELDS,
        window: { type: 'string', enum: ['day'] },
        threshold: { type: 'integer', enum: [80, 100], description: 'The share of the window passed, in percent.' },
        limit: { type: 'integer' },
        used: { type: 'integer', description: 'Requests counted in the window when it was passed.' },
        windowStart: time('The start of the window (UTC midnight).'),
        resetAt: time('When the window resets.'),
      },
    },
    example: {
      quotaId: 'cus_7Hk2Lm9PqR4sT1vW',
      customerId: 'cus_7Hk2Lm9PqR4sT1vW',
      keyId: 'key_4CqW2n7dPz9LmR1s',
      window: 'day',
      threshold: 80,
      limit: 100000,
      used: 80000,
      windowStart: '2026-11-21T00:00:00.000Z',
      resetAt: '2026-11-22T00:00:00.000Z',
    },
  },
  'key.banned': {
    summary: 'A temporary ban started, of a key’s quota or of a client address that kept calling while limited: once per ban.',
    data: {
      type: 'object',
      required: ['quotaId', 'customerId', 'keyId', 'address', 'until'],
      properties: {
        ...QUOTA_FIELDS,
        address: nullable('string', 'The client address (or IPv6 /64) banned, for a ban of requests without a valid key; else null.'),
        until: time('When the ban ends.'),
      },
    },
    example: {
      quotaId: 'key_4CqW2n7dPz9LmR1s',
      customerId: null,
      keyId: 'key_4CqW2n7dPz9LmR1s',
      address: null,
      until: '2026-11-21T12:01:30.000Z',
    },
  },
  'webhook_endpoint.disabled': {
    summary:
      'A webhook endpoint was disabled by the webhook delivery: its receiver answered 410 Gone (`disabledReason` `gone`), or its deliveries failed for longer than WEBHOOK_DISABLE_AFTER (`failing`).',
    data: {
      type: 'object',
      description: 'The endpoint as the admin API shows it, as it is once disabled (never its secret).',
      required: [
        'id',
        'url',
        'description',
        'events',
        'customerId',
        'enabled',
        'disabledReason',
        'failingSince',
        'previousSecretExpiresAt',
        'createdAt',
        'updatedAt',
      ],
      properties: {
        id: { type: 'string', description: 'we_…' },
        url: { type: 'string' },
        description: nullable('string', 'What it is for, or null.'),
        events: { type: 'array', items: { type: 'string' }, description: 'The event types it receives, or `["*"]`.' },
        customerId: nullable('string', 'Only this customer’s events, or null: every event.'),
        enabled: { type: 'boolean', const: false },
        disabledReason: { type: 'string', enum: ['gone', 'failing'] },
        failingSince: nullable('string', 'Since when its deliveries failed (RFC 3339), or null.'),
        previousSecretExpiresAt: nullable('string', 'Until when a rotated secret signs beside the current one (RFC 3339), or null.'),
        createdAt: time('When it was created.'),
        updatedAt: time('When it last changed: when it was disabled.'),
      },
    },
    example: {
      id: 'we_2Bc4De6Fg8Hi0Jk2',
      url: 'https://hooks.example.com/animal-store',
      description: 'Warehouse',
      events: ['order.placed', 'order.completed'],
      customerId: null,
      enabled: false,
      disabledReason: 'failing',
      failingSince: '2026-11-16T12:00:30.000Z',
      previousSecretExpiresAt: null,
      createdAt: '2026-11-01T09:00:00.000Z',
      updatedAt: T,
    },
  },
}

/** The document's `webhooks`: one POST per event type, in the closed list's order. */
export function eventWebhooks(): Record<string, object> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const { summary, data, example } = PAYLOADS[type]
      const payload = {
        type: 'object',
        required: ['type', 'timestamp', 'data'],
        additionalProperties: false,
        properties: { type: { type: 'string', const: type }, timestamp: time('When it happened (RFC 3339, UTC).'), data },
      }
      return [
        type,
        {
          post: {
            summary,
            description: `Sent to the webhook endpoints subscribed to \`${type}\` (or \`*\`); the same event is listed by GET /v1/events.`,
            tags: ['events'],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: payload, example: { type, timestamp: T, data: example } } },
            },
            responses: { '2XX': { description: 'Received: any 2xx answer acknowledges the event.' } },
          },
        },
      ]
    }),
  )
}
