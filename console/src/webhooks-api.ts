import { ALL_EVENTS, WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types.js'
import { call } from './api.js'

/** The webhook endpoints resource of the admin API (src/admin/webhook-endpoints/ is the contract). */
export interface WebhookEndpoint {
  id: string
  url: string
  description: string | null
  /** Types of EVENT_TYPES in their order, or ['*']: every type. */
  events: string[]
  customerId: string | null
  enabled: boolean
  disabledReason: 'manual' | 'gone' | 'failing' | null
  failingSince: string | null
  previousSecretExpiresAt: string | null
  createdAt: string
  updatedAt: string
}
export interface WebhookEndpointPage {
  data: WebhookEndpoint[]
  nextAfter: string | null
}
/** The answer of a create or a rotation: the secret, shown this once. */
export interface EndpointWithSecret {
  secret: string
  endpoint: WebhookEndpoint
}

/** A delivery of the endpoint's delivery log (src/admin/webhook-endpoints/delivery-schemas.ts is the contract). */
export interface WebhookDelivery {
  id: string
  endpointId: string
  eventId: string
  eventType: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  nextAttemptAt: string | null
  lastStatusCode: number | null
  lastDurationMs: number | null
  lastError: string | null
  createdAt: string
  updatedAt: string
}
export interface DeliveryAttempt {
  attempt: number
  startedAt: string
  durationMs: number | null
  statusCode: number | null
  error: string | null
  responseExcerpt: string | null
}
export interface WebhookDeliveryPage {
  data: WebhookDelivery[]
  nextAfter: number | null
}

/** The closed list of event types (the same module the service checks them against), and `*`. */
export const EVENT_TYPES: readonly string[] = WEBHOOK_EVENT_TYPES
export const EVERY_EVENT = ALL_EVENTS

/** Why an endpoint is disabled, in words. */
export const DISABLED_WHY: Record<NonNullable<WebhookEndpoint['disabledReason']>, string> = {
  manual: 'disabled by an operator',
  gone: 'disabled: its receiver answered 410 Gone',
  failing: 'disabled: its deliveries failed for too long',
}

const endpoint = (id: string) => `/webhook-endpoints/${encodeURIComponent(id)}`

export const webhooksApi = {
  list: (query: { after?: string; limit?: number; state?: string; customerId?: string }) =>
    call<WebhookEndpointPage>('GET', '/webhook-endpoints', { query }),
  get: (id: string) => call<WebhookEndpoint>('GET', endpoint(id)),
  create: (body: { url: string; events: string[]; customerId?: string; description?: string }) =>
    call<EndpointWithSecret>('POST', '/webhook-endpoints', { body }),
  update: (id: string, body: Record<string, unknown>) => call<WebhookEndpoint>('PATCH', endpoint(id), { body }),
  remove: (id: string) => call<null>('DELETE', endpoint(id)),
  rotateSecret: (id: string, expiresInSeconds: number) =>
    call<EndpointWithSecret>('POST', `${endpoint(id)}/rotate-secret`, { body: { expiresInSeconds } }),
  deliveries: (id: string, query: { after?: number; limit?: number }) =>
    call<WebhookDeliveryPage>('GET', `${endpoint(id)}/deliveries`, { query }),
  delivery: (id: string, deliveryId: string) =>
    call<WebhookDelivery & { attemptLog: DeliveryAttempt[] }>('GET', `${endpoint(id)}/deliveries/${encodeURIComponent(deliveryId)}`),
  retry: (id: string, deliveryId: string) =>
    call<WebhookDelivery>('POST', `${endpoint(id)}/deliveries/${encodeURIComponent(deliveryId)}/retry`),
  replay: (id: string, since: string) => call<{ enqueued: number }>('POST', `${endpoint(id)}/replay`, { body: { since } }),
}
