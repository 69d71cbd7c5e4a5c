/**
 * The event types an endpoint may subscribe to, as webhooks/ reads them: the event log's closed
 * list (events/event-types.ts, which imports nothing, so that the console's bundle can take it
 * through this module too), or `*` for every type (the ones added later included).
 */
import { EVENT_TYPES, type EventType } from '../events/event-types.js'

export const WEBHOOK_EVENT_TYPES = EVENT_TYPES
export type WebhookEventType = EventType

/** Every type, now and later: an endpoint's `events` is either `["*"]` or a list of types. */
export const ALL_EVENTS = '*'
