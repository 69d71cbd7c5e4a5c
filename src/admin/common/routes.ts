import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { adminTokenOf } from '../../auth/admission.js'
import type { ChangeContext } from '../../changes/audit-log.js'
import { errorResponses as sharedErrorResponses } from '../../http/openapi-docs.js'
import type { KeyAdministration } from '../../keys/administration.js'
import type { UsageHistory } from '../../usage/usage-history.js'

/** What every operation of the admin API shares: where it is mounted, its services, its route config and documented answers. */

export const ADMIN_PREFIX = '/admin/v1'

/** The app the admin operations are registered on (under ADMIN_PREFIX), with the TypeBox type provider. */
export type AdminApp = Parameters<FastifyPluginAsyncTypebox>[0]

export interface AdminRoutesOptions {
  admin: KeyAdministration
  usage: UsageHistory
}

/** The route config of every operation: an admin token, the admin quota (the guard, auth/guard.ts). */
export const ADMIN_AUTH = { auth: 'admin' as const }

/** Who is changing what, for the audit log the service writes: the admin token and the request id. */
export const changeContext = (request: FastifyRequest): ChangeContext => ({
  actor: { type: 'admin_token', id: adminTokenOf(request).id },
  requestId: request.id,
})

/**
 * Paging links are always relative (RFC 8288): PUBLIC_BASE_URL names the public listener, and the
 * admin API is on another one (ADMIN_PORT), reachable only from this machine by default.
 */
export const link = (path: string, query: Record<string, string | number | undefined>) =>
  `<${path}?${Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&')}>; rel="next"`

/** The shared error responses, with the admin API's own words for 401 and 404. */
const ADMIN_STATUS_TEXT: Record<number, string> = {
  401: 'Missing, malformed, unknown or revoked admin token (an API key is never an admin token). Code: `unauthorized`.',
  404: 'No key with that id. Code: `not_found`.',
  409: 'The key cannot take this change: it is revoked, or it was rotated (change its successor), or (a rotation) it has expired. Code: `conflict`.',
}
export function errorResponses(...statuses: number[]): Record<number, object> {
  // The admin API's 409 is `conflict` and its 403 `forbidden_role` (API keys' `insufficient_scope` is not its).
  const own = (status: number) => (status === 409 ? 'conflict' : status === 403 ? 'forbidden_role' : status)
  const out = sharedErrorResponses(...statuses.map(own))
  for (const [status, description] of Object.entries(ADMIN_STATUS_TEXT)) {
    if (out[Number(status)] !== undefined) out[Number(status)] = { ...out[Number(status)], description }
  }
  return out
}

export const linkHeaderDoc = { Link: { type: 'string', description: 'rel="next": the next page, present only when there is one.' } }
