import { Type } from 'typebox'
import { adminTokenJson, revokeAdminToken } from '../../admin-tokens/admin-tokens.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { AdminTokenIdParams, type AdminTokenRoutesOptions, AdminTokenSummarySchema, tags } from './schemas.js'

export const RevokedAdminTokenSchema = Type.Object(
  {
    adminToken: ref(AdminTokenSummarySchema),
    alreadyRevoked: Type.Boolean({ description: 'True when the token was revoked before (revokedAt keeps the first time).' }),
  },
  { $id: 'RevokedAdminToken', title: 'RevokedAdminToken', additionalProperties: false },
)

/**
 * POST /admin-tokens/{tokenId}/revoke (revokeAdminToken): the CLI's `admin-tokens revoke` (the
 * same function, revokeAdminToken: the same change log, so every instance drops the token, and the
 * same audit entry). 200 with the token, like a key's revoke, idempotent alike.
 *
 * A token may not revoke itself (409): the console signs in with one token, and revoking it there
 * would end the session mid-click and, with the last admin token, lock the operator out of the
 * console. Revoking one's own token is still one step away: another admin token, or the CLI (which
 * the operator has, since tokens are made there first).
 */
export function revokeAdminTokenRoute(app: AdminApp, options: AdminTokenRoutesOptions): void {
  app.post(
    '/admin-tokens/:tokenId/revoke',
    {
      config: { ...ADMIN_AUTH, noBody: true },
      schema: {
        operationId: 'revokeAdminToken',
        summary: 'Revoke an admin token',
        description:
          'Revokes the admin token: every instance refuses it (401) within 2 s, this one at once. ' +
          'Only an `admin` token may call it, and not on itself (409 `conflict`: use another admin token or the CLI). ' +
          'Idempotent: revoking a revoked token answers 200 with alreadyRevoked true and the first revocation time. ' +
          'No body (none, or `{}`). Written to the audit log (`admin_token.revoke`; a repeat too, with `alreadyRevoked: true`).',
        tags,
        params: AdminTokenIdParams,
        response: {
          200: { description: 'Revoked.', ...ref(RevokedAdminTokenSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
          404: { ...errorResponses(404)[404], description: 'No admin token with that id. Code: `not_found`.' },
          409: {
            ...errorResponses(409)[409],
            description: 'The token named is the one making the request: revoke it with another admin token or the CLI. Code: `conflict`.',
          },
        },
      },
    },
    async (request) => {
      const body = request.body as unknown
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)) {
        throw new ApiError('invalid_request', 'revoke takes no body: send none, or {}')
      }
      const { tokenId } = request.params
      if (tokenId === request.adminToken!.id) {
        throw new ApiError(
          'conflict',
          'An admin token cannot revoke itself (it would end this session): revoke it with another admin token, or with the CLI (admin-tokens revoke)',
        )
      }
      const { actor } = changeContext(request)
      const outcome = await revokeAdminToken(
        options.adminTokens,
        tokenId,
        { audit: options.audit, actor, requestId: request.id },
        options.now(),
      )
      if (outcome === undefined) throw new ApiError('not_found', `No admin token with id ${tokenId}`)
      // This process at once; the others from the change log revokeAdminToken wrote.
      options.tokenCache.forget(outcome.record.hash)
      return { adminToken: adminTokenJson(outcome.record), alreadyRevoked: outcome.alreadyRevoked }
    },
  )
}
