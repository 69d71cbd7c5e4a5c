import type { AdminApp } from '../common/routes.js'
import { type AdminAuditOptions, listAuditLog } from './list.js'
import { AuditEntrySchema, AuditPageSchema } from './schemas.js'

/** The audit log resource (/audit-log): its shared schemas, in the order of the document's components. */
export type { AdminAuditOptions } from './list.js'

export const AUDIT_SCHEMAS = [AuditEntrySchema, AuditPageSchema]

/** Its operation. */
export function auditRoutes(app: AdminApp, options: AdminAuditOptions): void {
  listAuditLog(app, options)
}
