import { Type } from 'typebox'
import { adminTokenJson } from '../../admin-tokens/admin-tokens.js'
import { adminTokenOf } from '../../auth/admission.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { type AdminTokenRoutesOptions, AdminTokenSummarySchema, role, tags, tokenName } from './schemas.js'

export const CreateAdminTokenBody = Type.Object(
  { name: tokenName, role },
  { $id: 'CreateAdminToken', title: 'CreateAdminToken', additionalProperties: false },
)

export const CreatedAdminTokenSchema = Type.Object(
  {
    token: Type.String({
      description: 'The admin token (as_admin_…): shown only this once, only its SHA-256 is stored.',
      example: 'as_admin_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab',
    }),
    adminToken: ref(AdminTokenSummarySchema),
  },
  { $id: 'CreatedAdminToken', title: 'CreatedAdminToken', additionalProperties: false },
)

/**
 * POST /admin-tokens (createAdminToken): the CLI's `admin-tokens create` (the same function,
 * createAdminToken, so the same checks, change log and audit entry), for an `admin` token only: a
 * POST, so a `read` token is refused 403 `forbidden_role` by its credential before the body is read.
 * The new token is the caller's (`createdBy`): of its role at most, and revoked with it.
 */
export function createAdminTokenRoute(app: AdminApp, options: AdminTokenRoutesOptions): void {
  app.post(
    '/admin-tokens',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'createAdminToken',
        summary: 'Create an admin token',
        description:
          'Creates an admin token with a role: `read` to hand a colleague a token that may only look, `admin` for everything. ' +
          'Only an `admin` token may call it (a `read` token is refused 403 `forbidden_role`), and only for a role no higher than its own. ' +
          'The new token records the caller as its maker (`createdBy`) and lives no longer than it: revoking the caller, or any token above it, revokes the new token too (make a token that must outlive yours with the CLI). ' +
          'The token itself is in the answer this once (only its SHA-256 is stored); it works at once on every instance. ' +
          'Written to the audit log (`admin_token.create`, never the token).',
        tags,
        body: ref(CreateAdminTokenBody),
        response: {
          201: { description: 'Created; `token` is shown only this once.', ...ref(CreatedAdminTokenSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { actor } = changeContext(request)
      const { token, record } = await options.adminTokens.create(
        { ...request.body, by: adminTokenOf(request) },
        { actor, requestId: request.id },
        options.now(),
      )
      return reply.code(201).send({ token, adminToken: adminTokenJson(record) })
    },
  )
}
