import type { DisabledReason, WebhookEndpointRecord } from '../webhooks/endpoint.js'
import type { WebhookEndpointUpdate } from '../webhooks/repository.js'

/** A webhook_endpoints row as both SQL stores return it (same column names in both migrations). */
export interface WebhookEndpointRow {
  id: string
  url: string
  description: string | null
  /** JSON text in SQLite, already parsed (jsonb) in PostgreSQL. */
  events: string | string[]
  customer_id: string | null
  /** 0/1 in SQLite, a boolean in PostgreSQL. */
  enabled: number | boolean
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: number | string | null
  failing_since: number | string | null
  disabled_reason: DisabledReason | null
  created_at: number | string
  updated_at: number | string
}

const msOrNull = (value: number | string | null) => (value === null ? null : Number(value))

export const toWebhookEndpointRecord = (r: WebhookEndpointRow): WebhookEndpointRecord => ({
  id: r.id,
  url: r.url,
  description: r.description,
  events: (typeof r.events === 'string' ? JSON.parse(r.events) : r.events) as WebhookEndpointRecord['events'],
  customerId: r.customer_id,
  enabled: r.enabled === true || r.enabled === 1,
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretExpiresAt: msOrNull(r.previous_secret_expires_at),
  failingSince: msOrNull(r.failing_since),
  disabledReason: r.disabled_reason,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

export const WEBHOOK_ENDPOINT_COLUMNS =
  'id, url, description, events, customer_id, enabled, secret, previous_secret, previous_secret_expires_at, failing_since, disabled_reason, created_at, updated_at'

/** The columns an update writes, in the order of updateValues. */
export const WEBHOOK_ENDPOINT_UPDATED = [
  'url',
  'description',
  'events',
  'enabled',
  'secret',
  'previous_secret',
  'previous_secret_expires_at',
  'failing_since',
  'disabled_reason',
  'updated_at',
] as const

/** `enabled` as each engine stores it: SQLite has no boolean. */
type Flag = (enabled: boolean) => number | boolean

export const webhookEndpointValues = (e: WebhookEndpointRecord, flag: Flag): unknown[] => [
  e.id,
  e.url,
  e.description,
  JSON.stringify(e.events),
  e.customerId,
  flag(e.enabled),
  e.secret,
  e.previousSecret,
  e.previousSecretExpiresAt,
  e.failingSince,
  e.disabledReason,
  e.createdAt,
  e.updatedAt,
]

export const updateValues = (u: WebhookEndpointUpdate, flag: Flag): unknown[] => [
  u.url,
  u.description,
  JSON.stringify(u.events),
  flag(u.enabled),
  u.secret,
  u.previousSecret,
  u.previousSecretExpiresAt,
  u.failingSince,
  u.disabledReason,
  u.updatedAt,
]
