import type { AuditPage, AuditQuery, AuditRepository } from '../../keys/administration.js'
import type { AuditDraft } from '../../keys/repository.js'
import { auditPageSql } from '../audit-query.js'
import { AUDIT_COLUMNS, type AuditRow, auditValues, toAuditEntry } from '../key-row.js'
import type { Db } from './connection.js'

export class PostgresAuditRepository implements AuditRepository {
  constructor(private readonly db: Db) {}

  async append(entry: AuditDraft): Promise<void> {
    await this.db.query(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, auditValues(entry))
  }

  async list(query: AuditQuery): Promise<AuditPage> {
    const { sql, params } = auditPageSql(query, (n) => `$${n}`)
    const rows = await this.db.query<AuditRow>(sql, params)
    const entries = rows.slice(0, query.limit).map(toAuditEntry)
    return { entries, nextAfter: rows.length > query.limit ? entries[entries.length - 1]!.seq : null }
  }
}
