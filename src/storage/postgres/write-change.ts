import type pg from 'pg'
import type { RecordedChange } from '../../changes/audit-log.js'
import { AUDIT_COLUMNS, auditValues } from '../audit-row.js'

const COLUMNS = AUDIT_COLUMNS.split(', ').length

/**
 * The one writer of what a change records on PostgreSQL (its audit entries, in one statement; its
 * events will be written here too), called by the repository method that makes the change with the
 * client of its transaction: the change and its record commit together or not at all. Nothing else
 * inserts into audit_log.
 */
export async function writeChange(client: pg.PoolClient, change: RecordedChange): Promise<void> {
  if (change.audit.length === 0) return
  const rows = change.audit.map((_, row) => `(${Array.from({ length: COLUMNS }, (_, i) => `$${row * COLUMNS + i + 1}`).join(', ')})`)
  await client.query(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ${rows.join(', ')}`, change.audit.flatMap(auditValues))
}
