import type { AdminApp } from '../common/routes.js'
import { AdminTokenSchema, getAdminToken } from './get.js'

/** The caller's own admin token (/token): its schema, in the order of the document's components. */
export const TOKEN_SCHEMAS = [AdminTokenSchema]

/** Its operation. */
export function tokenRoutes(app: AdminApp): void {
  getAdminToken(app)
}
