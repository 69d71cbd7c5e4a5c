import { type AdminKey, call, type KeyPage, type Plan, type UsageBucket } from './api.js'

/** The customers resource of the admin API (src/admin/customers/ is the contract). */
export interface AdminCustomer {
  id: string
  name: string
  plan: Plan
  perMinute: number
  perDay: number
  metadata: Record<string, unknown> | null
  createdAt: string
  updatedAt: string
}
export interface CustomerPage {
  data: AdminCustomer[]
  nextAfter: string | null
}

/** A key as listed by customer: the admin key view has customerId (null without a customer). */
export type CustomerKey = AdminKey & { customerId: string | null }

const customer = (id: string) => `/customers/${encodeURIComponent(id)}`

export const customersApi = {
  list: (query: { plan?: string; name?: string; after?: string; limit?: number }) => call<CustomerPage>('GET', '/customers', { query }),
  get: (id: string) => call<AdminCustomer>('GET', customer(id)),
  keys: (id: string) => call<KeyPage>('GET', '/keys', { query: { customerId: id, limit: 100 } }),
  usageHistory: (id: string, query: { granularity: 'minute' | 'hour'; from: string; to: string }) =>
    call<{ data: UsageBucket[] }>('GET', `${customer(id)}/usage/history`, { query }),
}
