import type Database from 'better-sqlite3'
import type { AuditPage, AuditQuery, AuditRepository, RecordedChange } from '../../changes/audit-log.js'
import { AUDIT_SCAN_LIMITS, type AuditScanLimits, listAuditPage } from '../audit-query.js'
import { writeChange } from './write-change.js'

export class SqliteAuditRepository implements AuditRepository {
  /** Made once, on first use (better-sqlite3 builds four wrappers per transaction()). */
  private writeAlone: Database.Transaction<(change: RecordedChange) => void> | undefined

  constructor(
    private readonly db: Database.Database,
    /** The most rows a page examines (audit-query.ts); tests pass smaller ones. */
    private readonly scanLimits: AuditScanLimits = AUDIT_SCAN_LIMITS,
  ) {}

  async write(change: RecordedChange): Promise<void> {
    this.writeAlone ??= this.db.transaction((recorded: RecordedChange) => writeChange(this.db, recorded))
    this.writeAlone.immediate(change)
  }

  async list(query: AuditQuery): Promise<AuditPage> {
    const run = async ({ sql, params }: { sql: string; params: unknown[] }) => this.db.prepare(sql).all(...params)
    return listAuditPage(query, run, () => '?', this.scanLimits)
  }
}
