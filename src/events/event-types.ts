/**
 * The event log's closed list of types, in the order the API and the docs list them. It imports
 * nothing: the operator console's bundle takes it (through webhooks/event-types.ts), so the list an
 * endpoint subscribes to and the list the log writes cannot drift apart.
 */
export const EVENT_TYPES = [
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
export type EventType = (typeof EVENT_TYPES)[number]

/** The types a caller without the `orders:read` scope is not shown (GET /v1/events). */
export const ORDER_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => t.startsWith('order.'))
