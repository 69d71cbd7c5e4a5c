import type { EventQuery } from '../events/event.js'
import { EVENT_READ_COLUMNS } from './event-row.js'

/**
 * One page of the event log, the same statement on both engines but for the placeholders
 * (`mark(n)`): equality filters and the seq cursor, in seq order, one row more than the page (is
 * there a next one). The owner filters (customer, key chain, key) each lead an index of migration
 * 020 whose next column is seq (a type beside a customer or chain: that index with the type), so a
 * page walks an index in order; a list of types (a caller without `orders:read`) is checked on the
 * rows walked.
 */
export function eventPageSql(query: EventQuery, mark: (n: number) => string): { sql: string; params: unknown[] } {
  const where: string[] = []
  const params: unknown[] = []
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value)
    where.push(clause(mark(params.length)))
  }
  if (query.customerId !== undefined) add((p) => `customer_id = ${p}`, query.customerId)
  if (query.keyChainId !== undefined) add((p) => `key_chain_id = ${p}`, query.keyChainId)
  if (query.keyId !== undefined) add((p) => `key_id = ${p}`, query.keyId)
  if (query.types !== undefined) {
    if (query.types.length === 0) where.push('1 = 0')
    else if (query.types.length === 1) add((p) => `type = ${p}`, query.types[0])
    else {
      const marks = query.types.map((t) => {
        params.push(t)
        return mark(params.length)
      })
      where.push(`type IN (${marks.join(', ')})`)
    }
  }
  if (query.after !== undefined) add((p) => `seq > ${p}`, query.after)
  params.push(query.limit + 1)
  const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`
  return { sql: `SELECT ${EVENT_READ_COLUMNS} FROM events ${filter} ORDER BY seq LIMIT ${mark(params.length)}`, params }
}
