import { type FanOut, type LoggedEvent, newDeliveryId } from './delivery.js'
import type { WebhookEndpointRecord } from './endpoint.js'
import { ALL_EVENTS } from './event-types.js'

/**
 * Which endpoint receives which event, in one place (a replay asks it; an endpoint's walk of the
 * log, eventFilter): an endpoint receives an event of a type it subscribes to (or every type,
 * `["*"]`), and, when it has a customer, only that customer's events (the event's owner: its
 * orders, its keys). Whether the endpoint is enabled is the caller's to know: only enabled ones walk.
 */
export function endpointReceives(endpoint: Pick<WebhookEndpointRecord, 'events' | 'customerId'>, event: LoggedEvent): boolean {
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

/**
 * The same rule as the conditions a store's walk of the log puts in its query (so that the index
 * does the filtering): the customer whose events it receives, if one, and the types, if not every
 * one. A test holds the stores' walks to endpointReceives.
 */
export function eventFilter(endpoint: Pick<WebhookEndpointRecord, 'events' | 'customerId'>): {
  customerId: string | null
  types: readonly string[] | null
} {
  const events = endpoint.events as readonly string[]
  return { customerId: endpoint.customerId, types: events[0] === ALL_EVENTS ? null : events }
}
