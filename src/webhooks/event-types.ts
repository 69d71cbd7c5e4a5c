/**
 * The event types an endpoint may subscribe to, as webhooks/ reads them: the event log's closed
 * list, or `*` for every type (the ones added later included). This module is webhooks/' one
 * import of that list, and imports nothing itself, so that the console's bundle can take it too.
 * Until the event log has its own module of types, the list is written here, in its order.
 */
export const WEBHOOK_EVENT_TYPES = [
  'pet.created',
  'order.placed',
  'order.completed',
  'order.cancelled',
  'order.expired',
  'key.created',
  'key.rotated',
  'key.revoked',
  'key.leak_reported',
  'key.usage_threshold',
  'key.banned',
  'webhook_endpoint.disabled',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** Every type, now and later: an endpoint's `events` is either `["*"]` or a list of types. */
export const ALL_EVENTS = '*'
