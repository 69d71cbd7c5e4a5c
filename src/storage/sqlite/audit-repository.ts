import type Database from 'better-sqlite3'
import type { AuditPage, AuditQuery, AuditRepository } from '../../keys/administration.js'
import type { AuditDraft } from '../../keys/repository.js'
import { AUDIT_SCAN_LIMITS, type AuditScanLimits, listAuditPage } from '../audit-query.js'
import { AUDIT_COLUMNS, auditValues } from '../key-row.js'

export class SqliteAuditRepository implements AuditRepository {
  constructor(
    private readonly db: Database.Database,
    /** The most rows a page examines (audit-query.ts); tests pass smaller ones. */
    private readonly scanLimits: AuditScanLimits = AUDIT_SCAN_LIMITS,
  ) {}

  async append(entry: AuditDraft): Promise<void> {
    this.db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(...auditValues(entry))
  }

  async list(query: AuditQuery): Promise<AuditPage> {
    const run = async ({ sql, params }: { sql: string; params: unknown[] }) => this.db.prepare(sql).all(...params)
    return listAuditPage(query, run, () => '?', this.scanLimits)
  }
}
