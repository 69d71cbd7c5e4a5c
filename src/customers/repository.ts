import type { RecordedChange } from '../changes/audit-log.js'
import type { PlanName } from '../shared/plans.js'
import type { CustomerRecord } from './customer.js'

export interface CustomerPageFilter {
  plan?: PlanName
  name?: string
  /** Rows to return (the caller asks for one more than a page to know whether another follows). */
  limit: number
  after?: string
}

/** The mutable fields of a customer, as the service computed them. */
export type CustomerUpdate = Pick<CustomerRecord, 'name' | 'plan' | 'perMinute' | 'perDay' | 'metadata' | 'updatedAt'>

/**
 * Storage of customers (implemented by each store; `Storage.customers`). Every change writes what
 * it records (`recorded`: its audit entry) in the same transaction.
 */
export interface CustomerRepository {
  insertCustomer(record: CustomerRecord, recorded: RecordedChange): Promise<void>
  findCustomerById(id: string): Promise<CustomerRecord | undefined>
  /** Up to `limit` customers in ascending id order after `after`, filtered in SQL. */
  pageCustomers(filter: CustomerPageFilter): Promise<CustomerRecord[]>
  /**
   * Writes `update` to customer `id` if it still has updatedAt `expectedUpdatedAt` (optimistic
   * concurrency); plan and limits go to every unrevoked key of the customer too, with a change-log
   * row each (every instance reloads them). Returns the updated record and the hashes of the keys
   * changed, or undefined when the condition failed (nothing written).
   */
  updateCustomer(
    id: string,
    expectedUpdatedAt: number,
    update: CustomerUpdate,
    recorded: RecordedChange,
  ): Promise<{ customer: CustomerRecord; keyHashes: string[] } | undefined>
}
