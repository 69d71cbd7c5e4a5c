import type { AdminTokenRecord, AdminTokenRole } from '../admin-tokens/admin-token-repository.js'
import { ADMIN_UNAUTHORIZED, type AdminAuthResult, type AdminTokenResolver } from '../admin-tokens/admin-tokens.js'
import { bearerChallenge } from '../http/bearer.js'
import { type RouteSettings, settingsOf } from '../http/route-settings.js'
import { ApiError } from '../shared/errors.js'
import { ADMIN_QUOTA } from '../shared/plans.js'
import type { AdminTokenAdmission } from './admission.js'
import type { CredentialKind } from './credential.js'

/**
 * Whether an admin route only reads, so that a token of the role `read` may call it: a GET or
 * HEAD, or a route whose config says `adminRead: true` (a POST that only reads, e.g. a lookup by
 * a secret that must not travel in a URL). Everything else is a change. The one place this is
 * decided: the guard's refusal below and the admin document (admin/openapi.ts) both ask it.
 */
export const isAdminRead = (method: string, settings: Pick<RouteSettings, 'adminRead'>): boolean =>
  method === 'GET' || method === 'HEAD' || settings.adminRead === true

/** What a role may do: `read` only reads. */
export const mayChange = (role: AdminTokenRole): boolean => role === 'admin'

/** The 403 of a change called with a token that may not change. */
export const forbiddenRole = (role: AdminTokenRole, method: string, template: string): ApiError =>
  new ApiError('forbidden_role', `This admin token has the role ${role}: it may read but not change (${method} ${template})`)

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
    judge(found) {
      if (found.token !== undefined) return { credential: found.token }
      const id = found.revokedTokenId
      return { refused: { problem: found.problem }, presented: id === undefined ? undefined : { adminTokenId: id } }
    },
    limitedAs: (token) => ({ identity: 'adm:' + token.id, quota: ADMIN_QUOTA, who: { adminTokenId: token.id } }),
    admitted: (token, limits, decision): AdminTokenAdmission => ({ kind: 'adminToken', token, limits, decision }),
    // Here, in the admin credential, rather than in the guard or a hook of every route: the role
    // is a rule of admin tokens, and /v1 requests (API keys) never run it. Checked after the
    // limiter (a refused change still counts against the token's quota, like any call) and before
    // the body is read or validated: a read token learns nothing about a change's input.
    authorize(request, token) {
      if (mayChange(token.role)) return undefined
      const settings = settingsOf(request)
      if (isAdminRead(request.method, settings)) return undefined
      const template = (settings.url ?? request.url).replace(/:(\w+)/g, '{$1}')
      // Not audited (the audit log records what was done, and a refusal does nothing); logged, and
      // the access line names the token with the 403.
      request.log.warn(
        { adminTokenId: token.id, role: token.role, method: request.method, route: template },
        'admin change refused for role',
      )
      return forbiddenRole(token.role, request.method, template)
    },
    unauthorized: ({ problem }) =>
      new ApiError('unauthorized', ADMIN_UNAUTHORIZED[problem], {
        'www-authenticate': bearerChallenge(problem === 'missing' ? 'invalid_request' : 'invalid_token'),
      }),
  }
}
