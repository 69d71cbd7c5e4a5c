import type Database from 'better-sqlite3'
import type { AuditPage, AuditQuery, AuditRepository } from '../../keys/administration.js'
import type { AuditDraft } from '../../keys/repository.js'
import { auditPageSql } from '../audit-query.js'
import { AUDIT_COLUMNS, type AuditRow, auditValues, toAuditEntry } from '../key-row.js'

export class SqliteAuditRepository implements AuditRepository {
  constructor(private readonly db: Database.Database) {}

  async append(entry: AuditDraft): Promise<void> {
    this.db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(...auditValues(entry))
  }

  async list(query: AuditQuery): Promise<AuditPage> {
    const { sql, params } = auditPageSql(query, () => '?')
    const rows = this.db.prepare<unknown[], AuditRow>(sql).all(...params)
    const entries = rows.slice(0, query.limit).map(toAuditEntry)
    return { entries, nextAfter: rows.length > query.limit ? entries[entries.length - 1]!.seq : null }
  }
}
