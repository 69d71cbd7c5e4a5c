import type { AuditPage, AuditQuery, AuditRepository, RecordedChange } from '../../changes/audit-log.js'
import { AUDIT_SCAN_LIMITS, type AuditScanLimits, listAuditPage } from '../audit-query.js'
import type { Db } from './connection.js'
import { writeChange } from './write-change.js'

export class PostgresAuditRepository implements AuditRepository {
  constructor(
    private readonly db: Db,
    /** The most rows a page examines (audit-query.ts); tests pass smaller ones. */
    private readonly scanLimits: AuditScanLimits = AUDIT_SCAN_LIMITS,
  ) {}

  async write(change: RecordedChange): Promise<void> {
    await this.db.transaction((client) => writeChange(client, change))
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
