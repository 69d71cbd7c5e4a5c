import type Database from 'better-sqlite3'
import type { RecordedChange } from '../../changes/audit-log.js'
import { AUDIT_COLUMNS, auditValues } from '../audit-row.js'
import { EVENT_COLUMNS, eventValues } from '../event-row.js'

interface Inserts {
  audit: Database.Statement
  event: Database.Statement
}

const inserts = new WeakMap<Database.Database, Inserts>()

/**
 * The one writer of what a change records on SQLite (its audit entries and its events), called by
 * the repository method that makes the change, inside its transaction: the change and its record
 * commit together or not at all (an outbox). Nothing else inserts into audit_log or events. An
 * event with a `onceKey` written before is skipped, the rest of the change kept. Nothing more is
 * written for webhooks: each endpoint walks the log (migration 025).
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
    }
    inserts.set(db, statements)
  }
  for (const entry of audit) statements.audit.run(...auditValues(entry))
  for (const event of events) statements.event.run(...eventValues(event))
}
