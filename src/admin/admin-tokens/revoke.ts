import { Type } from 'typebox'
import { adminTokenJson } from '../../admin-tokens/admin-tokens.js'
import { adminTokenOf } from '../../auth/admission.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { AdminTokenIdParams, type AdminTokenRoutesOptions, AdminTokenSummarySchema, tags } from './schemas.js'

export const RevokedAdminTokenSchema = Type.Object(
  {
    adminToken: ref(AdminTokenSummarySchema),
    alreadyRevoked: Type.Boolean({ description: 'True when the token was revoked before (revokedAt keeps the first time).' }),
    alsoRevoked: Type.Array(ref(AdminTokenSummarySchema), {
      description:
        'The tokens under it that were still active and are revoked with it now: the ones it made, the ones they made, and so on (makers first). Empty when there were none.',
    }),
  },
  { $id: 'RevokedAdminToken', title: 'RevokedAdminToken', additionalProperties: false },
)

/**
 * POST /admin-tokens/{tokenId}/revoke (revokeAdminToken): the CLI's `admin-tokens revoke` (the
 * same function, revokeAdminToken: the token and every token under it, the same change log, so
 * every instance drops them, and the same audit entries). 200 with the token and those taken with
 * it, like a key's revoke, idempotent alike.
 *
 * A token may not revoke itself, nor a token above it (409, revokeAdminToken says why): the console
 * signs in with one token, and revoking it there would end the session mid-click and, with the last
 * admin token, lock the operator out of the console. Either is still one step away: another admin
 * token, or the CLI (which the operator has, since tokens are made there first).
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
          'Revokes the admin token and, in the same change, every active token under it: the tokens it made, the ones they made, and so on (`alsoRevoked`). ' +
          'Every instance refuses them all (401) within 2 s, this one at once. ' +
          'Only an `admin` token may call it, and neither on itself nor on a token above it, whose revocation would take the caller along (409 `conflict`: use another admin token or the CLI). ' +
          'Idempotent: revoking a revoked token answers 200 with alreadyRevoked true and the first revocation time. ' +
          'No body (none, or `{}`). Written to the audit log: `admin_token.revoke` for the token (a repeat too, with `alreadyRevoked: true`; with `alsoRevoked`, the ids taken with it), and one for each token taken with it (`revokedWith`).',
        tags,
        params: AdminTokenIdParams,
        response: {
          200: { description: 'Revoked.', ...ref(RevokedAdminTokenSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
          404: { ...errorResponses(404)[404], description: 'No admin token with that id. Code: `not_found`.' },
          409: {
            ...errorResponses(409)[409],
            description:
              "The token named is the one making the request, or a token above it (its maker, its maker's maker, …): revoking it would revoke the caller too. Revoke it with another admin token or the CLI. Code: `conflict`.",
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
      const { actor } = changeContext(request)
      // This process's cache at once (the service); the others from the change log.
      const outcome = await options.adminTokens.revoke(tokenId, { actor, requestId: request.id }, options.now(), adminTokenOf(request))
      return {
        adminToken: adminTokenJson(outcome.record),
        alreadyRevoked: outcome.alreadyRevoked,
        alsoRevoked: outcome.alsoRevoked.map(adminTokenJson),
      }
    },
  )
}
