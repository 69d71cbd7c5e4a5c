/**
 * The audit log's closed lists, in a module that imports nothing: the operator console's browser
 * bundle takes them from here (its filters), so the API and the console cannot drift apart.
 */

/**
 * The actions that only read (a listing, a view, usage, the audit log itself): every admin read is
 * on record, so on a much-viewed key they outnumber its changes. `kind=read` is these, `kind=change`
 * every other action. A new read action belongs here, or it shows among the changes.
 */
const READ_ACTIONS = [
  'key.list',
  'key.read',
  'key.usage',
  'audit_log.list',
  'key.usage_history',
  'usage.top',
  'order.list',
  'order.read',
  'key.lookup',
  'customer.list',
  'customer.read',
  'customer.usage_history',
  'webhook_endpoint.list',
  'webhook_endpoint.read',
  'event.list',
  'webhook_delivery.list',
  'webhook_delivery.read',
] as const

/** Every action the audit log records (change-recorder.ts says when each is written), in the order the API lists them. */
export const AUDIT_ACTIONS = [
  'key.create',
  'key.update',
  'key.rotate',
  'key.revoke',
  'order.cancel',
  'key.leak_reported',
  'customer.create',
  'customer.update',
  ...READ_ACTIONS,
  'admin_token.create',
  'admin_token.revoke',
  'webhook_endpoint.create',
  'webhook_endpoint.update',
  'webhook_endpoint.delete',
  'webhook_endpoint.rotate_secret',
  'webhook_delivery.retry',
  'webhook_endpoint.replay',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

export const AUDIT_READ_ACTIONS: readonly AuditAction[] = READ_ACTIONS

/**
 * Who acted: an admin token (the admin API), the CLI, the service itself (the bootstrap key), or a
 * secret scanner reporting a leaked key (its id names it: `github`).
 */
export const ACTOR_TYPES = ['admin_token', 'cli', 'system', 'secret_scanner'] as const
