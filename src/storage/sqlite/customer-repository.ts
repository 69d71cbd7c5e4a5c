import type Database from 'better-sqlite3'
import type { RecordedChange } from '../../changes/audit-log.js'
import type { CustomerRecord } from '../../customers/customer.js'
import type { CustomerPageFilter, CustomerRepository, CustomerUpdate } from '../../customers/repository.js'
import { CUSTOMER_COLUMNS, type CustomerRow, customerValues, toCustomerRecord } from '../customer-row.js'
import { writeChange } from './write-change.js'

/** Customers in SQLite: each change one IMMEDIATE transaction with its keys' plan and what it records (its audit entry). */
export class SqliteCustomerRepository implements CustomerRepository {
  constructor(private readonly db: Database.Database) {}

  async insertCustomer(record: CustomerRecord, recorded: RecordedChange): Promise<void> {
    this.db
      .transaction(() => {
        this.db
          .prepare(`INSERT INTO customers (${CUSTOMER_COLUMNS}) VALUES (${CUSTOMER_COLUMNS.replace(/\w+/g, '?')})`)
          .run(...customerValues(record))
        writeChange(this.db, recorded)
      })
      .immediate()
  }

  async findCustomerById(id: string): Promise<CustomerRecord | undefined> {
    const row = this.db.prepare<[string], CustomerRow>('SELECT * FROM customers WHERE id = ?').get(id)
    return row && toCustomerRecord(row)
  }

  async pageCustomers({ plan, name, limit, after }: CustomerPageFilter): Promise<CustomerRecord[]> {
    const where = ['id > @after']
    if (plan !== undefined) where.push('plan = @plan')
    // instr, not LIKE: no wildcard in the name can change the meaning. lower() folds ASCII only.
    if (name !== undefined) where.push('instr(lower(name), lower(@name)) > 0')
    return this.db
      .prepare<[Record<string, unknown>], CustomerRow>(`SELECT * FROM customers WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`)
      .all({ after: after ?? '', plan: plan ?? null, name: name ?? null, limit })
      .map(toCustomerRecord)
  }

  async updateCustomer(
    id: string,
    expectedUpdatedAt: number,
    u: CustomerUpdate,
    recorded: RecordedChange,
  ): Promise<{ customer: CustomerRecord; keyHashes: string[] } | undefined> {
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare<unknown[], CustomerRow>(
            `UPDATE customers SET name = ?, plan = ?, per_minute = ?, per_day = ?, metadata = ?, updated_at = ?
              WHERE id = ? AND updated_at = ? RETURNING *`,
          )
          .get(
            u.name,
            u.plan,
            u.perMinute,
            u.perDay,
            u.metadata === null ? null : JSON.stringify(u.metadata),
            u.updatedAt,
            id,
            expectedUpdatedAt,
          )
        if (row === undefined) return undefined
        // Its keys take its plan and limits, and every instance reloads them (the change log).
        const keys = this.db
          .prepare<unknown[], { hash: string }>(
            `UPDATE api_keys SET plan = ?, per_minute = ?, per_day = ?, updated_at = MAX(updated_at + 1, ?)
              WHERE customer_id = ? AND revoked_at IS NULL AND (plan <> ? OR per_minute <> ? OR per_day <> ?) RETURNING hash`,
          )
          .all(u.plan, u.perMinute, u.perDay, u.updatedAt, id, u.plan, u.perMinute, u.perDay)
        const log = this.db.prepare('INSERT INTO key_changes (key_hash, changed_at) VALUES (?, ?)')
        for (const { hash } of keys) log.run(hash, u.updatedAt)
        writeChange(this.db, recorded)
        return { customer: toCustomerRecord(row), keyHashes: keys.map((k) => k.hash) }
      })
      .immediate()
  }
}
