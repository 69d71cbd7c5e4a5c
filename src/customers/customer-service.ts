import type { Actor, AuditAction, AuditRepository, ChangeContext } from '../keys/administration.js'
import type { AuditDraft } from '../keys/repository.js'
import { type Clock, systemClock } from '../shared/clock.js'
import type { Granularity } from '../usage/counts.js'
import type { UsageBucket, UsageRepository } from '../usage/repository.js'
import type { UsageHistory } from '../usage/usage-history.js'
import type { CreateCustomerRequest, CustomerPage, CustomerRecord, ListCustomersQuery, UpdateCustomerRequest } from './customer.js'
import { generateCustomerId } from './customer-id.js'
import { checkCustomerChange, checkListQuery, checkNewCustomer } from './customer-validation.js'
import { CustomerNotFoundError } from './errors.js'
import type { CustomerRepository } from './repository.js'

export interface CustomerServiceOptions {
  customers: CustomerRepository
  audit: AuditRepository
  /** A customer's usage history: the sum of its keys' (usage/). */
  usage: Pick<UsageRepository, 'customerKeyIds'>
  history: Pick<UsageHistory, 'keysHistory'>
  clock?: Clock
  /** This process's key cache: the keys a plan change rewrote are dropped at once (other processes poll the change log). */
  cache?: { forget(keyHash: string): void }
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
      this.entry(ctx, 'customer.create', now, { customerId: record.id, ...describe(record) }),
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
        await this.options.audit.append(this.entry(ctx, 'customer.update', now, { customerId: id, changed, ...describe(current) }))
        return current
      }
      const updated = await this.options.customers.updateCustomer(
        id,
        current.updatedAt,
        next,
        this.entry(ctx, 'customer.update', now, { customerId: id, changed, ...describe(next) }),
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
    if (record === undefined) throw new CustomerNotFoundError(id)
    return record
  }

  private async recordRead(ctx: ChangeContext | undefined, action: AuditAction, details: Record<string, unknown>): Promise<void> {
    if (ctx === undefined) return
    const given = Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined))
    await this.options.audit.append(this.entry(ctx, action, this.clock.now(), given))
  }

  /** Customers are not keys: an entry's keyId is null, its details name the customer. */
  private entry(ctx: ChangeContext, action: AuditAction, at: number, details: Record<string, unknown>): AuditDraft {
    const actor: Actor = { type: ctx.actor.type, id: ctx.actor.id }
    return { at, actor, action, keyId: null, details, requestId: ctx.requestId ?? null }
  }
}

/** What the audit log keeps of a customer: never its metadata (which may be personal). */
const describe = (c: Pick<CustomerRecord, 'name' | 'plan' | 'perMinute' | 'perDay'>) => ({
  name: c.name,
  plan: c.plan,
  perMinute: c.perMinute,
  perDay: c.perDay,
})
