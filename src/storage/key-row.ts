import type { ApiKeyRecord } from '../keys/api-key.js'
import type { PlanName } from '../keys/plans.js'

/** An api_keys row as both SQL stores return it (same column names in both migrations). */
export interface KeyRow {
  id: string
  name: string
  plan: PlanName
  per_minute: number
  per_day: number
  hash: string
  prefix: string
  created_at: number
  revoked_at: number | null
}

export const toKeyRecord = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  perMinute: r.per_minute,
  perDay: r.per_day,
  hash: r.hash,
  prefix: r.prefix,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
})
