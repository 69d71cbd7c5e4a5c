import { call, type KeyPage, type Plan, type UsageBucket } from './api.js'

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

/** The keys of a customer the console reads at once (the API's largest page). */
export const CUSTOMER_KEYS_SHOWN = 100

const customer = (id: string) => `/customers/${encodeURIComponent(id)}`

export const customersApi = {
  list: (query: { plan?: string; name?: string; after?: string; limit?: number }) => call<CustomerPage>('GET', '/customers', { query }),
  get: (id: string) => call<AdminCustomer>('GET', customer(id)),
  /** Only the fields sent change; a plan or limit change applies to every key of the customer. */
  update: (id: string, body: Record<string, unknown>) => call<AdminCustomer>('PATCH', customer(id), { body }),
  /** Its keys, newest first: the first 100 (nextAfter says whether there are more). */
  keys: (id: string) => call<KeyPage>('GET', '/keys', { query: { customerId: id, limit: CUSTOMER_KEYS_SHOWN } }),
  usageHistory: (id: string, query: { granularity: 'minute' | 'hour'; from: string; to: string }) =>
    call<{ data: UsageBucket[] }>('GET', `${customer(id)}/usage/history`, { query }),
}
