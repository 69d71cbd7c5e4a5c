import { invalid } from '../shared/refusal.js'
import type { AuditPage, AuditQuery, AuditRepository, ChangeContext } from './audit-log.js'
import type { ChangeRecorder } from './change-recorder.js'

/** Reading the audit log (the admin API's `GET /audit-log`), itself on record as `audit_log.list`. */
export class AuditLogService {
  constructor(
    private readonly log: Pick<AuditRepository, 'list'>,
    private readonly recorder: ChangeRecorder,
  ) {}

  async list(query: AuditQuery, ctx?: ChangeContext): Promise<AuditPage> {
    if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > 100)
      throw invalid('limit', (name) => `${name('limit')} must be an integer from 1 to 100`)
    if (query.from !== undefined && query.to !== undefined && query.from > query.to)
      throw invalid('from', (name) => `${name('from')} must not be after ${name('to')}`)
    // Read before the entry of this very read is written, so a page never shows its own reading.
    const page = await this.log.list(query)
    const { limit, order, after, keyId, action, actorType, actorId, kind, from, to } = query
    await this.recorder.read(ctx, {
      action: 'audit_log.list',
      details: { limit, order, after, keyId, action, actorType, actorId, kind, from, to },
    })
    return page
  }
}
