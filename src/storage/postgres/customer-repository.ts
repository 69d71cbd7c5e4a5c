import type { RecordedChange } from '../../changes/audit-log.js'
import type { CustomerRecord } from '../../customers/customer.js'
import type { CustomerPageFilter, CustomerRepository, CustomerUpdate } from '../../customers/repository.js'
import { CUSTOMER_COLUMNS, type CustomerRow, customerValues, toCustomerRecord } from '../customer-row.js'
import type { Db } from './connection.js'
import { logKeyChanges } from './key-change-log.js'
import { writeChange } from './write-change.js'

const INSERT = `INSERT INTO customers (${CUSTOMER_COLUMNS}) VALUES (${CUSTOMER_COLUMNS.split(', ')
  .map((_, i) => `$${i + 1}`)
  .join(', ')})`

/** Customers in PostgreSQL: each change one transaction with its keys' plan, their change-log rows (and NOTIFY) and what it records (its audit entry). */
export class PostgresCustomerRepository implements CustomerRepository {
  constructor(private readonly db: Db) {}

  async insertCustomer(record: CustomerRecord, recorded: RecordedChange): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query(INSERT, customerValues(record))
      await writeChange(client, recorded)
    })
  }

  async findCustomerById(id: string): Promise<CustomerRecord | undefined> {
    const [row] = await this.db.query<CustomerRow>('SELECT * FROM customers WHERE id = $1', [id])
    return row && toCustomerRecord(row)
  }

  async pageCustomers({ plan, name, limit, after }: CustomerPageFilter): Promise<CustomerRecord[]> {
    const values: unknown[] = [after ?? '']
    // COLLATE "C": the same byte order as SQLite's, whatever the database's collation.
    const where = ['id COLLATE "C" > $1']
    if (plan !== undefined) {
      values.push(plan)
      where.push(`plan = $${values.length}`)
    }
    if (name !== undefined) {
      values.push(name)
      // strpos, not LIKE: no wildcard in the name can change the meaning.
      where.push(`strpos(lower(name), lower($${values.length})) > 0`)
    }
    values.push(limit)
    const rows = await this.db.query<CustomerRow>(
      `SELECT * FROM customers WHERE ${where.join(' AND ')} ORDER BY id COLLATE "C" LIMIT $${values.length}`,
      values,
    )
    return rows.map(toCustomerRecord)
  }

  async updateCustomer(
    id: string,
    expectedUpdatedAt: number,
    u: CustomerUpdate,
    recorded: RecordedChange,
  ): Promise<{ customer: CustomerRecord; keyHashes: string[] } | undefined> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<CustomerRow>(
        `UPDATE customers SET name = $1, plan = $2, per_minute = $3, per_day = $4, metadata = $5, updated_at = $6
          WHERE id = $7 AND updated_at = $8 RETURNING *`,
        [
          u.name,
          u.plan,
          u.perMinute,
          u.perDay,
          u.metadata === null ? null : JSON.stringify(u.metadata),
          u.updatedAt,
          id,
          expectedUpdatedAt,
        ],
      )
      const row = rows[0]
      if (row === undefined) return undefined
      // Its keys take its plan and limits, and every instance reloads them (the change log).
      const keys = await client.query<{ hash: string }>(
        `UPDATE api_keys SET plan = $1, per_minute = $2, per_day = $3, updated_at = GREATEST(updated_at + 1, $4)
          WHERE customer_id = $5 AND revoked_at IS NULL AND (plan <> $1 OR per_minute <> $2 OR per_day <> $3) RETURNING hash`,
        [u.plan, u.perMinute, u.perDay, u.updatedAt, id],
      )
      const keyHashes = keys.rows.map((k) => k.hash)
      if (keyHashes.length > 0) await logKeyChanges(client, keyHashes, u.updatedAt)
      await writeChange(client, recorded)
      return { customer: toCustomerRecord(row), keyHashes }
    })
  }
}
