import type { AdminApp } from '../common/routes.js'
import { CreateAdminTokenBody, CreatedAdminTokenSchema, createAdminTokenRoute } from './create.js'
import { AdminTokenPageSchema, listAdminTokens } from './list.js'
import { RevokedAdminTokenSchema, revokeAdminTokenRoute } from './revoke.js'
import { type AdminTokenRoutesOptions, AdminTokenSummarySchema } from './schemas.js'

export type { AdminTokenRoutesOptions } from './schemas.js'

/** The admin tokens resource (/admin-tokens…): its shared schemas, in the order of the document's components. */
export const ADMIN_TOKEN_SCHEMAS = [
  AdminTokenSummarySchema,
  CreateAdminTokenBody,
  CreatedAdminTokenSchema,
  RevokedAdminTokenSchema,
  AdminTokenPageSchema,
]

/** Its operations, in the order of the document's paths. */
export function adminTokenRoutes(app: AdminApp, options: AdminTokenRoutesOptions): void {
  for (const route of [createAdminTokenRoute, listAdminTokens, revokeAdminTokenRoute]) route(app, options)
}
