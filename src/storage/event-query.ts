import type { EventQuery } from '../events/event.js'
import { EVENT_READ_COLUMNS } from './event-row.js'

/** What differs between the engines' pages of the event log. */
export interface EventPageDialect {
  /** The placeholder of the n-th parameter. */
  mark: (n: number) => string
  /** The log's order: seq on SQLite (one writer: the order of the commits), `xid, seq` on PostgreSQL. */
  order: string
  /** The cursor's condition: the events after the one whose seq is the parameter `p`. */
  after: (p: string) => string
  /** Columns read beside the event's. */
  columns?: string
}

export const SQLITE_EVENT_PAGE: EventPageDialect = { mark: () => '?', order: 'seq', after: (p) => `seq > ${p}` }

/**
 * One page of the event log, the same statement on both engines but for the dialect: equality
 * filters and the cursor, in the log's order, one row more than the page (is there a next one).
 * The owner filters (customer, key chain, key) each lead an index whose next columns are the
 * order's (a type beside a customer or chain: that index with the type), so a page walks an index
 * in order; a list of types (a caller without `orders:read`) is checked on the rows walked.
 */
export function eventPageSql(query: EventQuery, dialect: EventPageDialect): { sql: string; params: unknown[] } {
  const { mark } = dialect
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
  if (query.after !== undefined) add(dialect.after, query.after)
  params.push(query.limit + 1)
  const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`
  const columns = dialect.columns === undefined ? EVENT_READ_COLUMNS : `${EVENT_READ_COLUMNS}, ${dialect.columns}`
  return { sql: `SELECT ${columns} FROM events ${filter} ORDER BY ${dialect.order} LIMIT ${mark(params.length)}`, params }
}
