import { randomId } from '../shared/base62.js'
import type { WebhookEventType } from './event-types.js'

/**
 * A webhook endpoint: a URL that is sent the events it subscribes to, signed with its secret.
 * Times are Unix ms.
 */
export interface WebhookEndpointRecord {
  /** we_…, made like a key id. */
  id: string
  /** As parsed (WHATWG URL): what the deliveries call. */
  url: string
  description: string | null
  /** The types it receives, in the closed list's order, or `['*']`: every type. */
  events: WebhookEventType[] | ['*']
  /** Only this customer's events (its orders, its keys); null: every event. */
  customerId: string | null
  enabled: boolean
  /** `whsec_…`: signs every delivery. Never shown but in the answer that made it. */
  secret: string
  /** The secret before the last rotation, which signs beside `secret` until previousSecretExpiresAt; else null. */
  previousSecret: string | null
  previousSecretExpiresAt: number | null
  /** Since when its deliveries have failed without a success in between (the deliveries set it); null when they do not. */
  failingSince: number | null
  /** Why it is disabled: by an operator (`manual`), its receiver answered 410 (`gone`), or it failed too long (`failing`); null while enabled. */
  disabledReason: DisabledReason | null
  createdAt: number
  updatedAt: number
}

export const DISABLED_REASONS = ['manual', 'gone', 'failing'] as const
export type DisabledReason = (typeof DISABLED_REASONS)[number]

/** An endpoint's id: `we_` and 16 base62 characters. */
export const WEBHOOK_ENDPOINT_ID_PATTERN = '^we_[0-9A-Za-z]{16}$'
export const generateWebhookEndpointId = (): string => randomId('we_')

export interface CreateWebhookEndpointInput {
  url: string
  /** Types of the closed list, or `['*']`. */
  events: string[]
  customerId?: string
  description?: string | null
}

/** Only the fields present change; `null` clears the description. */
export interface UpdateWebhookEndpointInput {
  url?: string
  events?: string[]
  enabled?: boolean
  description?: string | null
}

export interface RotateWebhookSecretInput {
  /** How long the current secret keeps signing beside the new one: 0 to 604800 s (default 86400). */
  expiresInSeconds?: number
}

export const ENDPOINT_STATES = ['enabled', 'disabled'] as const

export interface ListWebhookEndpointsQuery {
  customerId?: string
  state?: (typeof ENDPOINT_STATES)[number]
  /** 1 to 100. */
  limit: number
  /** Endpoint id cursor: endpoints in ascending id order after it. */
  after?: string
}

export interface WebhookEndpointPage {
  endpoints: WebhookEndpointRecord[]
  /** Pass as `after` for the next page; null on the last page. */
  nextAfter: string | null
}
