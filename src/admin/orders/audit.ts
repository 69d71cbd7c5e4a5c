import { errorResponses as sharedErrorResponses } from '../../http/openapi-docs.js'
import type { AuditAction, AuditEntry, AuditRepository, ChangeContext } from '../../keys/administration.js'
import type { OrderRepository } from '../../orders/repository.js'
import type { AdminRoutesOptions } from '../common/routes.js'

/** What the orders resource needs: the store's orders, and the audit log its calls are written to. */
export interface AdminOrdersOptions extends AdminRoutesOptions {
  orders: OrderRepository
  audit: AuditRepository
  now: () => number
}

/**
 * Every admin call is on record, as the key service does for keys (keys/key-service.ts): the admin
 * token as actor, the request id, and the key that placed the order as the entry's key, so that a
 * key's audit history shows what operators did to its orders. Absent filters are left out.
 */
export async function record(
  options: AdminOrdersOptions,
  ctx: ChangeContext,
  action: AuditAction,
  keyId: string | null,
  details: Record<string, unknown>,
): Promise<void> {
  await options.audit.append(auditEntry(options, ctx, action, keyId, details))
}

/** The entry `record` writes; a change passes it to the store, which writes it in the change's transaction. */
export function auditEntry(
  { now }: AdminOrdersOptions,
  ctx: ChangeContext,
  action: AuditAction,
  keyId: string | null,
  details: Record<string, unknown>,
): Omit<AuditEntry, 'seq'> {
  const given = Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined))
  return { at: now(), actor: { ...ctx.actor }, action, keyId, details: given, requestId: ctx.requestId ?? null }
}

/** The shared error responses, with this resource's words for 404 and 409. */
export function orderErrorResponses(...answers: Array<number | 'order_not_placed'>): Record<number, object> {
  const out = sharedErrorResponses(...answers)
  if (out[404] !== undefined) out[404] = { ...out[404], description: 'No order with that id. Code: `not_found`.' }
  return out
}
