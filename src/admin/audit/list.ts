import { AUDIT_SCAN_LIMIT, AUDIT_TIME_DETAILS, AUDIT_TIME_RANGE_LIMIT, type AuditEntry } from '../../changes/audit-log.js'
import type { AuditLogService } from '../../changes/audit-log-service.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, errorResponses, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, ref } from '../common/schemas.js'
import { iso, parseTime } from '../common/views.js'
import { type AuditEntryJson, AuditPageSchema, ListAuditQuery } from './schemas.js'

export function auditJson(entry: AuditEntry): AuditEntryJson {
  return {
    seq: entry.seq,
    at: iso(entry.at),
    actor: entry.actor,
    action: entry.action,
    keyId: entry.keyId,
    details: detailsJson(entry.details),
    requestId: entry.requestId,
  }
}

/** An entry's details with its times (AUDIT_TIME_DETAILS) as RFC 3339; stored as Unix ms, in every row old or new. */
function detailsJson(details: Record<string, unknown>): Record<string, unknown> {
  const json = { ...details }
  for (const field of AUDIT_TIME_DETAILS) {
    const value = json[field]
    if (typeof value === 'number') json[field] = iso(value)
  }
  return json
}

/** What the audit log resource needs: the log's reader. */
export interface AdminAuditOptions {
  auditLog: AuditLogService
}

/** GET /audit-log (listAuditLog). */
export function listAuditLog(app: AdminApp, { auditLog }: AdminAuditOptions): void {
  app.get(
    '/audit-log',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listAuditLog',
        summary: 'List the audit log',
        description:
          'Every successful admin call (changes and reads) and every change made with the CLI (keys and admin tokens): who, what, when, which key; never a secret. Oldest first, or newest first with `order=desc`; filtered by key, action, kind (changes or reads), actor and time (`from` inclusive, `to` exclusive; `from` after `to` is 400 naming `from`), all filters combined with AND. Paged with `after`, a seq in the listing order (Link rel="next" keeps the filters and the order). ' +
          'A page walks one index, chosen by the filters (a key and a kind, else a key, an actor, an action, a kind, an actor type, else the seq); ' +
          `other filters are checked on the entries walked, and then a page examines at most ${AUDIT_SCAN_LIMIT.toLocaleString('en')} entries: ` +
          'a page can be short, even empty, with `nextAfter` where the walk stopped; follow `nextAfter` until it is null. ' +
          `\`from\`/\`to\` bound the walk to the seqs of the range's entries when it holds at most ${AUDIT_TIME_RANGE_LIMIT.toLocaleString('en')}. ` +
          'This listing is itself recorded, after it is read, with its filters.',
        tags: ['audit'],
        querystring: ListAuditQuery,
        response: {
          200: { description: 'A page of entries.', ...ref(AuditPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, order, after, keyId, action, kind, actorType, actor, from, to } = request.query
      const filters = { order, keyId, action, kind, actorType, actorId: actor }
      const bounds = { from: parseTime('from', from) ?? undefined, to: parseTime('to', to) ?? undefined }
      const page = await auditLog.list({ limit, after, ...filters, ...bounds }, changeContext(request))
      if (page.nextAfter !== null)
        reply.header(
          'link',
          link(`${ADMIN_PREFIX}/audit-log`, { limit, order, keyId, action, kind, actorType, actor, from, to, after: page.nextAfter }),
        )
      return { data: page.entries.map(auditJson), nextAfter: page.nextAfter }
    },
  )
}
