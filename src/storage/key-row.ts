import type { ApiKeyRecord } from '../keys/api-key.js'
import type { PlanName } from '../shared/plans.js'
import { scopesFromText, scopesToText } from '../shared/scopes.js'

/** An api_keys row as both SQL stores return it (same column names in both migrations). */
export interface KeyRow {
  id: string
  name: string
  plan: PlanName
  per_minute: number
  per_day: number
  hash: string
  prefix: string
  quota_id: string
  created_at: number
  updated_at: number
  expires_at: number | null
  revoked_at: number | null
  rotated_to: string | null
  rotated_from: string | null
  /** JSON text in SQLite, already parsed (jsonb) in PostgreSQL. */
  metadata: string | Record<string, unknown> | null
  last_used_at: number | null
  customer_id: string | null
  /** Space-separated (shared/scopes.ts). */
  scopes: string
}

export const parseJson = (value: string | Record<string, unknown> | null): Record<string, unknown> | null =>
  typeof value === 'string' ? (JSON.parse(value) as Record<string, unknown>) : value

export const toKeyRecord = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  perMinute: r.per_minute,
  perDay: r.per_day,
  hash: r.hash,
  prefix: r.prefix,
  quotaId: r.quota_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  rotatedTo: r.rotated_to,
  rotatedFrom: r.rotated_from,
  metadata: parseJson(r.metadata),
  lastUsedAt: r.last_used_at,
  customerId: r.customer_id,
  scopes: scopesFromText(r.scopes),
})

/** Column list and values of an INSERT of a whole record, in the same order for both stores. */
export const KEY_COLUMNS =
  'id, name, plan, per_minute, per_day, hash, prefix, quota_id, created_at, updated_at, expires_at, revoked_at, rotated_to, rotated_from, metadata, last_used_at, customer_id, scopes'

export const keyValues = (k: ApiKeyRecord): unknown[] => [
  k.id,
  k.name,
  k.plan,
  k.perMinute,
  k.perDay,
  k.hash,
  k.prefix,
  k.quotaId,
  k.createdAt,
  k.updatedAt,
  k.expiresAt,
  k.revokedAt,
  k.rotatedTo,
  k.rotatedFrom,
  k.metadata === null ? null : JSON.stringify(k.metadata),
  k.lastUsedAt,
  k.customerId,
  scopesToText(k.scopes),
]
