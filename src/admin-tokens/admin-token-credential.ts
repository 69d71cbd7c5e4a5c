import { bearerChallenge } from '../auth/bearer.js'
import type { CredentialKind } from '../auth/credential.js'
import { ApiError } from '../shared/errors.js'
import { ADMIN_QUOTA } from '../shared/plans.js'
import type { AdminTokenRecord } from './admin-token-repository.js'
import { ADMIN_UNAUTHORIZED, type AdminAuthResult, type AdminTokenResolver } from './admin-tokens.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin token an admin route was called with (set by the guard). */
    adminToken: AdminTokenRecord | null
    /**
     * The id of the admin token the request presented, once storage knows that token, whether or
     * not it was let through (revoked, over its limit): the access line names it.
     */
    presentedAdminTokenId?: string
  }
}

/**
 * Admin tokens, the credential of the admin routes (route config `auth: 'admin'`), for the guard
 * (auth/guard.ts): the same limiter, headers and 429s as /v1. A valid token is limited per token
 * at ADMIN_QUOTA; anything else per client address at the anonymous rates (the same identity as
 * keyless /v1 requests: guessing is slow on either surface), then refused 401, an API key with
 * words of its own.
 */
export function adminTokenCredential(
  tokens: AdminTokenResolver,
): CredentialKind<AdminAuthResult, AdminTokenRecord, { problem: 'api_key' }> {
  return {
    resolveCached: (secret) => tokens.resolveCached(secret),
    mayExist: (secret) => tokens.mayExist(secret),
    resolve: (secret) => tokens.resolve(secret),
    admit(request, found) {
      request.presentedAdminTokenId = found.token?.id ?? found.revokedTokenId
      return found.token !== undefined ? { credential: found.token } : { refused: { problem: found.problem } }
    },
    limitedAs: (token) => ({ identity: 'adm:' + token.id, quota: ADMIN_QUOTA, who: { adminTokenId: token.id } }),
    accept(request, token) {
      request.adminToken = token
    },
    unauthorized: ({ problem }) =>
      new ApiError('unauthorized', ADMIN_UNAUTHORIZED[problem], {
        'www-authenticate': bearerChallenge(problem === 'missing' ? 'invalid_request' : 'invalid_token'),
      }),
  }
}
