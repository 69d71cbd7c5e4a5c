import { AUDIT_CHANGE_ACTIONS, AUDIT_READ_ACTIONS, type AuditQuery } from '../keys/administration.js'

/**
 * The SQL of an audit log page, the same on both engines but for their placeholders (`?` or `$n`):
 * the filters, the cursor in the listing's order and one row more than the page, to know whether
 * another page follows. The scan walks the seq key (or `audit_log_key_id_seq` with a key), so a
 * page costs the rows it skips over, like the listing before the filters.
 */
export function auditPageSql(query: AuditQuery, placeholder: (n: number) => string): { sql: string; params: unknown[] } {
  const params: unknown[] = []
  const where: string[] = []
  const bind = (value: unknown) => {
    params.push(value)
    return placeholder(params.length)
  }
  const desc = query.order === 'desc'
  if (query.after !== undefined) where.push(`seq ${desc ? '<' : '>'} ${bind(query.after)}`)
  if (query.keyId !== undefined) where.push(`key_id = ${bind(query.keyId)}`)
  if (query.action !== undefined) where.push(`action = ${bind(query.action)}`)
  if (query.actorType !== undefined) where.push(`actor_type = ${bind(query.actorType)}`)
  if (query.actorId !== undefined) where.push(`actor_id = ${bind(query.actorId)}`)
  if (query.kind !== undefined) {
    const actions = query.kind === 'read' ? AUDIT_READ_ACTIONS : AUDIT_CHANGE_ACTIONS
    where.push(`action IN (${actions.map(bind).join(', ')})`)
  }
  if (query.from !== undefined) where.push(`at >= ${bind(query.from)}`)
  if (query.to !== undefined) where.push(`at < ${bind(query.to)}`)
  const filter = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`
  const limit = bind(query.limit + 1)
  return { sql: `SELECT * FROM audit_log${filter} ORDER BY seq ${desc ? 'DESC' : 'ASC'} LIMIT ${limit}`, params }
}
