import type { AuditAction } from '../changes/audit-actions.js'
import type { ChangeContext } from '../changes/audit-log.js'
import type { ChangeRecorder } from '../changes/change-recorder.js'
import type { KeyCache } from '../keys/key-service.js'
import { type Clock, systemClock } from '../shared/clock.js'
import { notFound } from '../shared/refusal.js'
import type { Granularity } from '../usage/counts.js'
import type { UsageBucket, UsageRepository } from '../usage/repository.js'
import type { UsageHistory } from '../usage/usage-history.js'
import type { CreateCustomerRequest, CustomerPage, CustomerRecord, ListCustomersQuery, UpdateCustomerRequest } from './customer.js'
import { generateCustomerId } from './customer-id.js'
import { checkCustomerChange, checkListQuery, checkNewCustomer } from './customer-validation.js'
import type { CustomerRepository } from './repository.js'

export interface CustomerServiceOptions {
  customers: CustomerRepository
  /** Makes every audit entry of the service (changes/). */
  recorder: ChangeRecorder
  /** A customer's usage history: the sum of its keys' (usage/). */
  usage: Pick<UsageRepository, 'customerKeyIds'>
  history: Pick<UsageHistory, 'keysHistory'>
  clock?: Clock
  /** This process's key cache: the keys a plan change rewrote are dropped at once (other processes poll the change log). */
  cache?: Pick<KeyCache, 'forget'>
}

/** Optimistic updates retry this often when another writer changed the customer in between. */
const MAX_ATTEMPTS = 5

const FIELDS = ['name', 'plan', 'perMinute', 'perDay', 'metadata'] as const

/**
 * Customers: every rule of their input (the key's rules: name, plan, Enterprise limits, metadata)
 * and their audit (`customer.create`, `customer.update`, and the reads with a context), for the
 * admin API. A plan change is written to every key of the customer in the same transaction.
 */
export class CustomerService {
  private readonly clock: Clock

  constructor(private readonly options: CustomerServiceOptions) {
    this.clock = options.clock ?? systemClock
  }

  async createCustomer(input: CreateCustomerRequest, ctx: ChangeContext): Promise<CustomerRecord> {
    const fields = checkNewCustomer(input)
    const now = this.clock.now()
    const record: CustomerRecord = { id: generateCustomerId(), ...fields, createdAt: now, updatedAt: now }
    await this.options.customers.insertCustomer(
      record,
      this.options.recorder.change(ctx, now, { action: 'customer.create', details: { customerId: record.id, ...describe(record) } }),
    )
    return record
  }

  async listCustomers(query: ListCustomersQuery, ctx?: ChangeContext): Promise<CustomerPage> {
    checkListQuery(query)
    const limit = query.limit
    const rows = await this.options.customers.pageCustomers({ ...query, limit: limit + 1 })
    const page = rows.slice(0, limit)
    await this.recordRead(ctx, 'customer.list', { plan: query.plan, name: query.name, limit, after: query.after })
    return { customers: page, nextAfter: rows.length > limit ? page[page.length - 1]!.id : null }
  }

  async getCustomer(id: string, ctx?: ChangeContext): Promise<CustomerRecord> {
    const record = await this.find(id)
    await this.recordRead(ctx, 'customer.read', { customerId: id })
    return record
  }

  async updateCustomer(id: string, patch: UpdateCustomerRequest, ctx: ChangeContext): Promise<CustomerRecord> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.find(id)
      const now = this.clock.now()
      const next = { ...checkCustomerChange(current, patch), updatedAt: Math.max(now, current.updatedAt + 1) }
      const changed = FIELDS.filter((f) => JSON.stringify(current[f]) !== JSON.stringify(next[f]))
      if (changed.length === 0) {
        // Nothing to write, but a successful call all the same: on record, as a read is.
        await this.recordRead(ctx, 'customer.update', { customerId: id, changed, ...describe(current) })
        return current
      }
      const updated = await this.options.customers.updateCustomer(
        id,
        current.updatedAt,
        next,
        this.options.recorder.change(ctx, now, { action: 'customer.update', details: { customerId: id, changed, ...describe(next) } }),
      )
      if (updated !== undefined) {
        for (const hash of updated.keyHashes) this.options.cache?.forget(hash)
        return updated.customer
      }
      if (attempt >= MAX_ATTEMPTS) throw new Error(`customer ${id} kept changing during the update; try again`)
    }
  }

  /** Every bucket of the range summed over every key of the customer (revoked ones included), zeros included. */
  async usageHistory(
    id: string,
    query: { granularity: Granularity; from?: number; to?: number },
    ctx?: ChangeContext,
  ): Promise<UsageBucket[]> {
    await this.find(id)
    const ids = await this.options.usage.customerKeyIds(id)
    const { range, buckets } = await this.options.history.keysHistory(ids, query)
    await this.recordRead(ctx, 'customer.usage_history', { customerId: id, granularity: query.granularity, from: range.from, to: range.to })
    return buckets
  }

  /** For the key service: a customer's plan and limits, which its keys take. */
  findCustomerById(id: string): Promise<CustomerRecord | undefined> {
    return this.options.customers.findCustomerById(id)
  }

  private async find(id: string): Promise<CustomerRecord> {
    const record = await this.options.customers.findCustomerById(id)
    if (record === undefined) throw notFound('customer', id)
    return record
  }

  /** Customers are not keys: an entry's keyId is null, its details name the customer. */
  private recordRead(ctx: ChangeContext | undefined, action: AuditAction, details: Record<string, unknown>): Promise<void> {
    return this.options.recorder.read(ctx, { action, details })
  }
}

/** What the audit log keeps of a customer: never its metadata (which may be personal). */
const describe = (c: Pick<CustomerRecord, 'name' | 'plan' | 'perMinute' | 'perDay'>) => ({
  name: c.name,
  plan: c.plan,
  perMinute: c.perMinute,
  perDay: c.perDay,
})
