import type Database from 'better-sqlite3'
import type { RecordedChange } from '../../changes/audit-log.js'
import { AUDIT_COLUMNS, auditValues } from '../audit-row.js'
import { EVENT_COLUMNS, eventValues } from '../event-row.js'

interface Inserts {
  audit: Database.Statement
  event: Database.Statement
  outbox: Database.Statement
}

/**
 * An event written is queued for the webhook dispatcher (migration 023's outbox), while some
 * endpoint is enabled: with none, nothing more is written. An endpoint enabled after the event's
 * change has not heard of it (the dispatcher fans out to the endpoints enabled when it runs).
 */
const OUTBOX_INSERT = 'INSERT INTO webhook_outbox (seq) SELECT ? WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled = 1)'

const inserts = new WeakMap<Database.Database, Inserts>()

/**
 * The one writer of what a change records on SQLite (its audit entries and its events), called by
 * the repository method that makes the change, inside its transaction: the change and its record
 * commit together or not at all (an outbox). Nothing else inserts into audit_log or events. An
 * event with a `onceKey` written before is skipped, the rest of the change kept. Each event
 * written is queued for the webhooks' dispatcher beside it (OUTBOX_INSERT).
 */
export function writeChange(db: Database.Database, change: RecordedChange): void {
  const { audit, events = [] } = change
  if (audit.length === 0 && events.length === 0) return
  if (!db.inTransaction) throw new Error('a recorded change is written inside the transaction of its change')
  let statements = inserts.get(db)
  if (statements === undefined) {
    statements = {
      audit: db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      event: db.prepare(`INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (once_key) DO NOTHING`),
      outbox: db.prepare(OUTBOX_INSERT),
    }
    inserts.set(db, statements)
  }
  for (const entry of audit) statements.audit.run(...auditValues(entry))
  for (const event of events) {
    const written = statements.event.run(...eventValues(event))
    if (written.changes === 1) statements.outbox.run(written.lastInsertRowid)
  }
}
