import type Database from 'better-sqlite3'
import type { RecordedChange } from '../../changes/audit-log.js'
import { AUDIT_COLUMNS, auditValues } from '../audit-row.js'

const inserts = new WeakMap<Database.Database, Database.Statement>()

/**
 * The one writer of what a change records on SQLite (its audit entries; its events will be written
 * here too), called by the repository method that makes the change, inside its transaction: the
 * change and its record commit together or not at all. Nothing else inserts into audit_log.
 */
export function writeChange(db: Database.Database, change: RecordedChange): void {
  if (change.audit.length === 0) return
  if (!db.inTransaction) throw new Error('a recorded change is written inside the transaction of its change')
  let insert = inserts.get(db)
  if (insert === undefined) {
    insert = db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`)
    inserts.set(db, insert)
  }
  for (const entry of change.audit) insert.run(...auditValues(entry))
}
