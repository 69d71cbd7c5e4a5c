import type pg from 'pg'
import type { RecordedChange } from '../../changes/audit-log.js'
import type { EventDraft } from '../../events/event.js'
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
 * An event's values (EVENT_COLUMNS' order) with its data cut to what follows the row's id made 0
 * (`{"id":0`), for a statement that writes the id the insert gave the row in its place; undefined
 * when its data does not begin with that id.
 */
function withDataAfterId(event: EventDraft): unknown[] | undefined {
  const values = eventValues(event)
  const data = values[3] as string
  if (!data.startsWith(ID_ZERO) || (data[ID_ZERO.length] !== ',' && data[ID_ZERO.length] !== '}')) return undefined
  values[3] = data.slice(ID_ZERO.length)
  return values
}

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
    const values = withDataAfterId(event)
    if (values === undefined) return undefined
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

/** A table whose rows insertRowsWithChanges writes: its identity column `id`, and the other columns with their types. */
export interface InsertedTable {
  readonly name: string
  readonly columns: readonly (readonly [column: string, type: string])[]
}

const EVENT_TYPES = ['text', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text']

/** The statement of insertRowsWithChanges for `table`: one text for any number of rows, so it is prepared once. */
function rowsWithChangesStatement(table: InsertedTable): string {
  const names = table.columns.map(([column]) => column).join(', ')
  const rowArrays = table.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')
  const first = table.columns.length + 1
  const eventArrays = ['bigint', ...EVENT_TYPES].map((type, i) => `$${first + i}::${type}[]`).join(', ')
  return `WITH input AS (
       SELECT nextval(pg_get_serial_sequence('${table.name}', 'id')) AS id, r.*
         FROM unnest(${rowArrays}) WITH ORDINALITY AS r (${names}, ord)),
     inserted AS (
       INSERT INTO ${table.name} (id, ${names}) OVERRIDING SYSTEM VALUE SELECT id, ${names} FROM input),
     written AS (
       INSERT INTO events (${EVENT_COLUMNS})
       SELECT e.id, e.type, e.occurred_at, '{"id":' || input.id || e.rest, e.customer_id, e.key_chain_id, e.key_id, e.once_key
         FROM unnest(${eventArrays}) WITH ORDINALITY AS e (row_ord, ${EVENT_COLUMNS.replace('data', 'rest')}, ord)
         JOIN input ON input.ord = e.row_ord
        ORDER BY e.ord
       ON CONFLICT (once_key) DO NOTHING)
     SELECT id, ord FROM input`
}

const statements = new WeakMap<InsertedTable, string>()

/**
 * insertWithChange for many rows at once: `rows` (values in `table.columns`' order) inserted in one
 * statement with what each one's change records, so that creates made together are one round trip
 * and one commit (PostgreSQL's time per create, pgbench, 8 clients: 10 at once 4× less than one
 * by one). Each row's id is taken from the table's identity sequence before its insert, so the
 * statement knows which row each id is and writes each event with its own row's id. The changes'
 * shape as insertWithChange's, else undefined. The statement's rows are `{ id, ord }`: ord is the
 * row's place in `rows`, from 1.
 */
export function insertRowsWithChanges(
  table: InsertedTable,
  rows: readonly (readonly unknown[])[],
  changes: readonly RecordedChange[],
): { sql: string; params: unknown[] } | undefined {
  const params: unknown[][] = Array.from({ length: table.columns.length + 1 + EVENT_TYPES.length }, () => [])
  for (const [r, row] of rows.entries()) {
    for (const [i, value] of row.entries()) params[i]!.push(value)
    const { audit, events = [] } = changes[r]!
    if (audit.length > 0) return undefined
    for (const event of events) {
      const values = withDataAfterId(event)
      if (values === undefined) return undefined
      params[table.columns.length]!.push(r + 1)
      for (const [i, value] of values.entries()) params[table.columns.length + 1 + i]!.push(value)
    }
  }
  let sql = statements.get(table)
  if (sql === undefined) {
    sql = rowsWithChangesStatement(table)
    statements.set(table, sql)
  }
  return { sql, params }
}
