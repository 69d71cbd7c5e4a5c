import type pg from 'pg'
import type { RecordedChange } from '../../changes/audit-log.js'
import { AUDIT_COLUMNS, auditValues } from '../audit-row.js'
import { EVENT_COLUMNS, eventValues } from '../event-row.js'

const placeholders = (rows: number, columns: number): string =>
  Array.from({ length: rows }, (_, row) => `(${Array.from({ length: columns }, (_, i) => `$${row * columns + i + 1}`).join(', ')})`).join(
    ', ',
  )

const AUDIT_WIDTH = AUDIT_COLUMNS.split(', ').length
const EVENT_WIDTH = EVENT_COLUMNS.split(', ').length

/**
 * The one writer of what a change records on PostgreSQL (its audit entries in one statement, its
 * events in another), called by the repository method that makes the change with the client of its
 * transaction: the change and its record commit together or not at all (an outbox). Nothing else
 * inserts into audit_log or events. An event with a `onceKey` written before is skipped, by any
 * instance (the unique index decides), the rest of the change kept. Nothing more is written for
 * webhooks: each endpoint walks the log (migration 025). The client's
 * transaction holds its lock on `events` from BEGIN (Db.transaction): how the log's listing knows
 * it may still write one.
 */
export async function writeChange(client: pg.PoolClient, change: RecordedChange): Promise<void> {
  const { audit, events = [] } = change
  if (audit.length > 0)
    await client.query(
      `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ${placeholders(audit.length, AUDIT_WIDTH)}`,
      audit.flatMap(auditValues),
    )
  if (events.length > 0)
    await client.query(
      `INSERT INTO events (${EVENT_COLUMNS}) VALUES ${placeholders(events.length, EVENT_WIDTH)} ON CONFLICT (once_key) DO NOTHING`,
      events.flatMap(eventValues),
    )
}

/** The text an event's data must begin with to be written by insertWithChange: the row's id, made 0. */
const ID_ZERO = '{"id":0'

/**
 * writeChange for a change that inserts one row, in one statement with the insert: `insert`
 * (an INSERT … RETURNING the row, its `id` among the columns) is a CTE that the events are written
 * from, so the row and its events are one round trip and one implicit transaction, where
 * writeChange in a transaction takes four (BEGIN, the insert, its record, COMMIT). `change` is
 * what the caller records of the row made with id 0; each event's data, the row's resource as the
 * API shows it, begins with that id (`{"id":0`), and is written with the id the insert gave it in
 * its place. Undefined when the change has another shape (audit entries; data that does not begin
 * with the id): the caller writes it with writeChange in a transaction instead. The once-keys as
 * writeChange. The statement locks `events` when it is parsed, before its insert
 * gives the transaction an xid (what the log's listing asks of a writer). Returns the statement,
 * whose rows are the insert's.
 */
export function insertWithChange(
  insert: string,
  insertParams: readonly unknown[],
  change: RecordedChange,
): { sql: string; params: unknown[] } | undefined {
  const { audit, events = [] } = change
  if (audit.length > 0) return undefined
  const params = [...insertParams]
  const rows: string[] = []
  for (const event of events) {
    const values = eventValues(event)
    const data = values[3] as string
    if (!data.startsWith(ID_ZERO) || (data[ID_ZERO.length] !== ',' && data[ID_ZERO.length] !== '}')) return undefined
    values[3] = data.slice(ID_ZERO.length)
    const first = params.length
    params.push(...values)
    const p = (i: number) => `$${first + i + 1}`
    rows.push(`(${p(0)}::text, ${p(1)}::text, ${p(2)}::bigint, ${p(3)}::text, ${p(4)}::text, ${p(5)}::text, ${p(6)}::text, ${p(7)}::text)`)
  }
  if (rows.length === 0) return { sql: insert, params }
  return {
    sql: `WITH inserted AS (${insert}),
       written AS (
         INSERT INTO events (${EVENT_COLUMNS})
         SELECT e.id, e.type, e.occurred_at, '{"id":' || inserted.id || e.rest, e.customer_id, e.key_chain_id, e.key_id, e.once_key
           FROM inserted, (VALUES ${rows.join(', ')}) AS e (${EVENT_COLUMNS.replace('data', 'rest')})
         ON CONFLICT (once_key) DO NOTHING
       )
     SELECT * FROM inserted`,
    params,
  }
}
