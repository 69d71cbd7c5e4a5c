import type { EventDraft } from '../events/event.js'
import type { Clock } from '../shared/clock.js'
import type { AuditAction } from './audit-actions.js'
import type { AuditDraft, AuditRepository, ChangeContext, RecordedChange } from './audit-log.js'

/*
 * Every audit entry is made here, and written one of two ways:
 *
 * - A change (`key.create`, `key.update`, `key.rotate`, `key.revoke`, `key.leak_reported`,
 *   `customer.create`, `customer.update`, `admin_token.create`, `admin_token.revoke`,
 *   `order.cancel`, `webhook_endpoint.create`, `.update`, `.delete`, `.rotate_secret`): the service
 *   makes its RecordedChange (`change`) and hands it to the repository method that makes the
 *   change, whose store writes it in the change's own transaction (`writeChange`, one function per
 *   engine). A revocation's record is made from what the transaction found (which keys or tokens it
 *   revoked, whether the one named was revoked already), so a repeated revoke (`alreadyRevoked:
 *   true`) is written there too, like any revoke; so is a deletion's, from the row it deleted. A
 *   leaked key's report is written in the transaction of the revocation it makes, or alone when it is
 *   only flagged (`record`). A change's events (events/) ride in the same RecordedChange
 *   (`withEvents`), so they are written by the same function in the same transaction; a client's
 *   change, which has no audit entry, still has its events.
 * - A call that succeeds without changing anything: the reads (`key.list`, `key.read`, `key.usage`,
 *   `key.lookup`, `audit_log.list`, `key.usage_history`, `usage.top`, `order.list`, `order.read`,
 *   `customer.list`, `customer.read`, `customer.usage_history`, `webhook_endpoint.list`,
 *   `webhook_endpoint.read`, `event.list`) and an update to the values a key, a customer or a webhook endpoint
 *   already has (`key.update`, `customer.update`, `webhook_endpoint.update` with `changed: []`):
 *   written after it (`read`), when the caller says who it is (the admin API always does; the CLI,
 *   which reads the database itself, does not for its reads).
 */

/** One entry of a change or a read: what was done, to which key (a key's history lists it), the details. */
export interface ChangeEntry {
  action: AuditAction
  keyId?: string | null
  details: Record<string, unknown>
}

/** A change with nothing to record. */
export const NOTHING_RECORDED: RecordedChange = { audit: [] }

/** A change's record with `events` after its own: what a store writes of a change that always has its events (an order's). */
export const withEvents = (change: RecordedChange, ...events: EventDraft[]): RecordedChange =>
  events.length === 0 ? change : { audit: change.audit, events: [...(change.events ?? []), ...events] }

/**
 * A change's record: its entries by `ctx`, at `at` (the change's own time), in order; nothing without
 * a `ctx` (a change no one asked to be on record: a test's, a client's). Absent details are left out.
 */
export function recordedChange(ctx: ChangeContext | undefined, at: number, ...entries: ChangeEntry[]): RecordedChange {
  if (ctx === undefined || entries.length === 0) return NOTHING_RECORDED
  const actor = { type: ctx.actor.type, id: ctx.actor.id }
  const requestId = ctx.requestId ?? null
  return {
    audit: entries.map(
      ({ action, keyId = null, details }): AuditDraft => ({ at, actor, action, keyId, details: given(details), requestId }),
    ),
  }
}

const given = (details: Record<string, unknown>) => Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined))

/**
 * The one maker of audit entries, built once by the domain and used by every service: a change's
 * record for its store to write, a change of no row written now, a read written after it.
 */
export class ChangeRecorder {
  constructor(
    private readonly log: Pick<AuditRepository, 'write'>,
    private readonly clock: Clock,
  ) {}

  /** See recordedChange. */
  change(ctx: ChangeContext | undefined, at: number, ...entries: ChangeEntry[]): RecordedChange {
    return recordedChange(ctx, at, ...entries)
  }

  /** Writes now a change that changes no row (a leaked key flagged), in its own transaction. */
  async record(change: RecordedChange): Promise<void> {
    if (change.audit.length > 0 || (change.events?.length ?? 0) > 0) await this.log.write(change)
  }

  /** A call that changed nothing, on record after it succeeded; nothing without a `ctx`. */
  async read(ctx: ChangeContext | undefined, entry: ChangeEntry): Promise<void> {
    await this.record(recordedChange(ctx, this.clock.now(), entry))
  }
}
