import { type FanOut, newDeliveryId, type OutboxEvent } from './delivery.js'
import type { WebhookEndpointRecord } from './endpoint.js'
import { ALL_EVENTS } from './event-types.js'

/**
 * Which endpoint receives which event, in one place (the dispatcher and a replay both ask it): an
 * endpoint receives an event of a type it subscribes to (or every type, `["*"]`), and, when it has
 * a customer, only that customer's events (the event's owner: its orders, its keys). Whether the
 * endpoint is enabled is the caller's to know: the dispatcher hands only enabled ones.
 */
export function endpointReceives(endpoint: Pick<WebhookEndpointRecord, 'events' | 'customerId'>, event: OutboxEvent): boolean {
  if (endpoint.customerId !== null && endpoint.customerId !== event.customerId) return false
  const events = endpoint.events as readonly string[]
  return events[0] === ALL_EVENTS || events.includes(event.type)
}

/** The deliveries of `events` to `endpoints`, made at `now`: one per event and endpoint that receives it, in event order. */
export const fanOut: FanOut = (events, endpoints, now) =>
  events.flatMap((event) =>
    endpoints
      .filter((endpoint) => endpointReceives(endpoint, event))
      .map((endpoint) => ({ id: newDeliveryId(now), endpointId: endpoint.id, event })),
  )
