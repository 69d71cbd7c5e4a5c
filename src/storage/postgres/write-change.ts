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
 * instance (the unique index decides), the rest of the change kept. Each event written is queued
 * for the webhooks' dispatcher in the same statement (migration 023's outbox), while some endpoint
 * is enabled: with none, nothing more is written. An endpoint enabled after the event's change has
 * not heard of it (the dispatcher fans out to the endpoints enabled when it runs).
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
      `WITH written AS (
         INSERT INTO events (${EVENT_COLUMNS}) VALUES ${placeholders(events.length, EVENT_WIDTH)} ON CONFLICT (once_key) DO NOTHING RETURNING seq
       )
       INSERT INTO webhook_outbox (seq) SELECT seq FROM written WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled)`,
      events.flatMap(eventValues),
    )
}
