import type { AuditPage, AuditQuery, AuditRepository } from '../../keys/administration.js'
import type { AuditDraft } from '../../keys/repository.js'
import { AUDIT_SCAN_LIMITS, type AuditScanLimits, listAuditPage } from '../audit-query.js'
import { AUDIT_COLUMNS, auditValues } from '../key-row.js'
import type { Db } from './connection.js'

export class PostgresAuditRepository implements AuditRepository {
  constructor(
    private readonly db: Db,
    /** The most rows a page examines (audit-query.ts); tests pass smaller ones. */
    private readonly scanLimits: AuditScanLimits = AUDIT_SCAN_LIMITS,
  ) {}

  async append(entry: AuditDraft): Promise<void> {
    await this.db.query(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, auditValues(entry))
  }

  async list(query: AuditQuery): Promise<AuditPage> {
    return listAuditPage(
      query,
      ({ sql, params }) => this.db.query(sql, params),
      (n) => `$${n}`,
      this.scanLimits,
    )
  }
}
