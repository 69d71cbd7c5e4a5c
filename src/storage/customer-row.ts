import type { CustomerRecord } from '../customers/customer.js'
import type { PlanName } from '../shared/plans.js'

/** A customers row as both SQL stores return it (same column names in both migrations). */
export interface CustomerRow {
  id: string
  name: string
  plan: PlanName
  per_minute: number
  per_day: number
  /** JSON text in SQLite, already parsed (jsonb) in PostgreSQL. */
  metadata: string | Record<string, unknown> | null
  created_at: number
  updated_at: number
}

export const toCustomerRecord = (r: CustomerRow): CustomerRecord => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  perMinute: Number(r.per_minute),
  perDay: Number(r.per_day),
  metadata: typeof r.metadata === 'string' ? (JSON.parse(r.metadata) as Record<string, unknown>) : r.metadata,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

export const CUSTOMER_COLUMNS = 'id, name, plan, per_minute, per_day, metadata, created_at, updated_at'

export const customerValues = (c: CustomerRecord): unknown[] => [
  c.id,
  c.name,
  c.plan,
  c.perMinute,
  c.perDay,
  c.metadata === null ? null : JSON.stringify(c.metadata),
  c.createdAt,
  c.updatedAt,
]
