import type { AuditPage, AuditQuery, AuditRepository } from '../../keys/administration.js'
import type { AuditDraft } from '../../keys/repository.js'
import { AUDIT_COLUMNS, type AuditRow, auditValues, toAuditEntry } from '../key-row.js'
import type { Db } from './connection.js'

export class PostgresAuditRepository implements AuditRepository {
  constructor(private readonly db: Db) {}

  async append(entry: AuditDraft): Promise<void> {
    await this.db.query(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, auditValues(entry))
  }

  async list({ limit, after, keyId }: AuditQuery): Promise<AuditPage> {
    const rows = await this.db.query<AuditRow>(
      'SELECT * FROM audit_log WHERE seq > $1 AND ($2::text IS NULL OR key_id = $2) ORDER BY seq LIMIT $3',
      [after ?? 0, keyId ?? null, limit + 1],
    )
    const entries = rows.slice(0, limit).map(toAuditEntry)
    return { entries, nextAfter: rows.length > limit ? entries[entries.length - 1]!.seq : null }
  }
}
