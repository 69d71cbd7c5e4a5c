import type { AuditAction } from '../changes/audit-actions.js'
import type { Actor, AuditDraft, AuditEntry } from '../changes/audit-log.js'
import { parseJson } from './key-row.js'

/** An audit_log row as both stores return it. */
export interface AuditRow {
  seq: number
  at: number
  actor_type: Actor['type']
  actor_id: string
  action: AuditAction
  key_id: string | null
  details: string | Record<string, unknown>
  request_id: string | null
}

export const toAuditEntry = (r: AuditRow): AuditEntry => ({
  seq: r.seq,
  at: r.at,
  actor: { type: r.actor_type, id: r.actor_id },
  action: r.action,
  keyId: r.key_id,
  details: parseJson(r.details) ?? {},
  requestId: r.request_id,
})

/** The columns an entry is written to, and its values in their order: for each store's `writeChange` only. */
export const AUDIT_COLUMNS = 'at, actor_type, actor_id, action, key_id, details, request_id'

export const auditValues = (e: AuditDraft): unknown[] => [
  e.at,
  e.actor.type,
  e.actor.id,
  e.action,
  e.keyId,
  JSON.stringify(e.details),
  e.requestId,
]
