import type { PlanName } from '../shared/plans.js'

/**
 * A customer: the owner of any number of API keys, which share its quota (minute, day and ban:
 * `c:<id>`, keys/api-key.ts) and its orders, and take its plan and limits. Times are Unix ms.
 */
export interface CustomerRecord {
  /** cus_…, made like a key id. */
  id: string
  name: string
  plan: PlanName
  /** The plan's limits, or on Enterprise the customer's own. */
  perMinute: number
  perDay: number
  /** Free-form JSON object for the operator; bounded in size, like a key's. */
  metadata: Record<string, unknown> | null
  createdAt: number
  updatedAt: number
}

export interface CreateCustomerRequest {
  name: string
  plan: string
  /** Enterprise only, and required there (both). */
  perMinute?: number
  perDay?: number
  metadata?: Record<string, unknown> | null
}

/** Only the fields present change; `null` clears metadata. */
export interface UpdateCustomerRequest {
  name?: string
  plan?: string
  perMinute?: number
  perDay?: number
  metadata?: Record<string, unknown> | null
}

export interface ListCustomersQuery {
  plan?: PlanName
  /** Case-insensitive substring of the name. */
  name?: string
  /** 1 to 100. */
  limit: number
  /** Customer id cursor: customers are listed in ascending id order after it. */
  after?: string
}

export interface CustomerPage {
  customers: CustomerRecord[]
  /** Pass as `after` for the next page; null on the last page. */
  nextAfter: string | null
}
