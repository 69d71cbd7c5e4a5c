import type { AdminApp, AdminRoutesOptions } from '../common/routes.js'
import { listAuditLog } from './list.js'
import { AuditEntrySchema, AuditPageSchema } from './schemas.js'

/** The audit log resource (/audit-log): its shared schemas, in the order of the document's components. */
export const AUDIT_SCHEMAS = [AuditEntrySchema, AuditPageSchema]

/** Its operation. */
export function auditRoutes(app: AdminApp, options: AdminRoutesOptions): void {
  listAuditLog(app, options)
}
