import type { EventDraft } from '../events/event.js'
import { type ACTOR_TYPES, AUDIT_ACTIONS, AUDIT_READ_ACTIONS, type AuditAction } from './audit-actions.js'

/**
 * The audit log: who changed or read what, when. Its entries are made by one module
 * (change-recorder.ts) and written by the stores, a change's in the change's own transaction.
 * Times are Unix milliseconds; the admin API shows them as RFC 3339.
 */

/**
 * Who made a change, for the audit log: an admin token (by id), the CLI (by OS user), the service
 * itself (`system`/`bootstrap`: the first key, created at start-up), or a secret scanner.
 */
export interface Actor {
  type: (typeof ACTOR_TYPES)[number]
  id: string
}

/** The actor of the first key a start creates (BOOTSTRAP_KEY). */
export const BOOTSTRAP_ACTOR: Actor = { type: 'system', id: 'bootstrap' }

/** Who is calling, for the audit log: required for a change, optional for a read (the CLI's reads are not on record). */
export interface ChangeContext {
  actor: Actor
  /** The X-Request-Id of the admin call; none from the CLI. */
  requestId?: string | null
}

/** One audit log entry. `details` never holds a secret (no key, no hash, no token). */
export interface AuditEntry {
  seq: number
  at: number
  /** Who; as read, an admin token's name beside its id (the token's, read from admin_tokens: tokens are revoked, never deleted). */
  actor: Actor & { name?: string }
  action: AuditAction
  keyId: string | null
  details: Record<string, unknown>
  /** The X-Request-Id of the admin call, or null from the CLI. */
  requestId: string | null
}

/** An entry to write; the store gives it its seq. */
export type AuditDraft = Omit<AuditEntry, 'seq'>

/**
 * What a change writes beside itself, in its own transaction, through the one function of each
 * store that writes it (`writeChange`): no change without its record, no record without its change.
 * An operator's change has its audit entries; a client's (a pet created, an order placed, completed,
 * cancelled or expired) has none, since the audit log records operators and the service. Either
 * has its events (events/), the client's too: the event log tells whoever reads it of both.
 */
export interface RecordedChange {
  /** In the order written. */
  readonly audit: readonly AuditDraft[]
  /** The events of the change (events/), written by the same function in the same transaction, in this order; absent: none. */
  readonly events?: readonly EventDraft[]
}

/** The audit listing's `kind` filter: the reads (AUDIT_READ_ACTIONS), or every other action. */
export const AUDIT_KINDS = ['change', 'read'] as const
export type AuditKind = (typeof AUDIT_KINDS)[number]
export const AUDIT_CHANGE_ACTIONS: readonly AuditAction[] = AUDIT_ACTIONS.filter((a) => !AUDIT_READ_ACTIONS.includes(a))

export const LIST_ORDERS = ['asc', 'desc'] as const
export type ListOrder = (typeof LIST_ORDERS)[number]

/**
 * The fields of an entry's `details` that hold a time: Unix ms (or null) like every time here, which
 * the admin API writes as RFC 3339 like the rest of its times.
 */
export const AUDIT_TIME_DETAILS: readonly string[] = [
  'expiresAt',
  'oldKeyExpiresAt',
  'oldKeyRevokedAt',
  'from',
  'to',
  'previousSecretExpiresAt',
  'since',
]

export interface AuditQuery {
  limit: number
  /** `asc` (default): oldest first; `desc`: newest first. */
  order?: ListOrder
  /** seq cursor, in the listing's order: entries after it (asc: newer than it; desc: older than it). */
  after?: number
  keyId?: string
  action?: AuditAction
  actorType?: Actor['type']
  actorId?: string
  kind?: AuditKind
  /** Unix ms: entries at or after `from`, before `to`. */
  from?: number
  to?: number
}

/**
 * What one audit page may examine (the store's walk, storage/audit-query.ts, says why these): at
 * most AUDIT_SCAN_LIMIT entries when filters are checked on the entries walked, and at most
 * AUDIT_TIME_RANGE_LIMIT entries of a time range counted to bound the walk to their seqs.
 */
export const AUDIT_SCAN_LIMIT = 1_000
export const AUDIT_TIME_RANGE_LIMIT = 10_000

export interface AuditPage {
  entries: AuditEntry[]
  nextAfter: number | null
}

/** Storage of the audit log (implemented by each store; `Storage.audit`). Append-only. */
export interface AuditRepository {
  /**
   * Writes a recorded change that changes no row of its own, in a transaction of its own: a call on
   * record that changed nothing (a read, an update to the values a key already has), a leaked key
   * flagged. Only the change recorder calls it; a change of rows hands its record to the
   * repository method that makes it.
   */
  write(change: RecordedChange): Promise<void>
  list(query: AuditQuery): Promise<AuditPage>
}
