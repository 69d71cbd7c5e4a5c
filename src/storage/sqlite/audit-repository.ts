import type Database from 'better-sqlite3'
import type { AuditPage, AuditQuery, AuditRepository } from '../../keys/administration.js'
import type { AuditDraft } from '../../keys/repository.js'
import { AUDIT_COLUMNS, type AuditRow, auditValues, toAuditEntry } from '../key-row.js'

export class SqliteAuditRepository implements AuditRepository {
  constructor(private readonly db: Database.Database) {}

  async append(entry: AuditDraft): Promise<void> {
    this.db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(...auditValues(entry))
  }

  async list({ limit, after, keyId }: AuditQuery): Promise<AuditPage> {
    const rows = this.db
      .prepare<[number, string | null, string | null, number], AuditRow>(
        'SELECT * FROM audit_log WHERE seq > ? AND (? IS NULL OR key_id = ?) ORDER BY seq LIMIT ?',
      )
      .all(after ?? 0, keyId ?? null, keyId ?? null, limit + 1)
    const entries = rows.slice(0, limit).map(toAuditEntry)
    return { entries, nextAfter: rows.length > limit ? entries[entries.length - 1]!.seq : null }
  }
}
