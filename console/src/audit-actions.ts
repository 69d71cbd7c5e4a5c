/**
 * The audit actions and actor kinds, as the console offers them in its filters: a copy of
 * AUDIT_ACTIONS, AUDIT_READ_ACTIONS and ACTOR_TYPES (src/keys/administration.ts), which the browser
 * bundle does not import; test/admin/audit-log.test.ts fails when they drift apart.
 */
export const AUDIT_ACTIONS = [
  'key.create',
  'key.update',
  'key.rotate',
  'key.revoke',
  'key.list',
  'key.read',
  'key.usage',
  'audit_log.list',
  'key.usage_history',
  'usage.top',
  'admin_token.create',
  'admin_token.revoke',
]
/** The actions that only read (the API's `kind=read`): greyed in the tables. */
export const AUDIT_READ_ACTIONS = new Set(['key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top'])
export const ACTOR_TYPES = ['admin_token', 'cli', 'system']
