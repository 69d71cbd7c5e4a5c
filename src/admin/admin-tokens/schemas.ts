import { type Static, Type } from 'typebox'
import { ADMIN_TOKEN_ROLES } from '../../admin-tokens/admin-token-repository.js'
import type { AdminTokenService } from '../../admin-tokens/admin-token-service.js'
import { NOT_BLANK } from '../../http/validation.js'
import { HIDDEN_CHARACTERS_TEXT, NO_CONTROL_CHARACTERS } from '../../shared/control-characters.js'
import { nullableTime, time } from '../common/schemas.js'

/**
 * The admin tokens resource (/admin-tokens…): what its operations share. Its own shapes, not the
 * token resource's (admin/token/, the caller's own token): a resource imports no other one, and
 * these tokens have a state (revokedAt) the caller's own token never has.
 */

export const tags = ['admin tokens']

/** What the operations need: the admin token service (which tells this process's token cache of a change at once). */
export interface AdminTokenRoutesOptions {
  adminTokens: AdminTokenService
  now: () => number
}

export const ADMIN_TOKEN_ID_PATTERN = '^adm_[0-9A-Za-z]{16}$'
export const AdminTokenIdParams = Type.Object({
  tokenId: Type.String({ pattern: ADMIN_TOKEN_ID_PATTERN, description: 'The admin token id (adm_…).' }),
})

export const role = Type.Unsafe<(typeof ADMIN_TOKEN_ROLES)[number]>({
  type: 'string',
  enum: [...ADMIN_TOKEN_ROLES],
  description:
    '`read`: reads only (keys, usage, the audit log, orders, admin tokens); every change is refused 403 `forbidden_role`. `admin`: everything, including creating admin tokens (of any role: `admin` is the highest) and revoking them.',
  example: 'read',
})

export const AdminTokenSummarySchema = Type.Object(
  {
    id: Type.String({ description: 'The token id (adm_…): the actor id of its audit entries.' }),
    name: Type.String({ description: 'Who or what the token is for.' }),
    prefix: Type.String({ description: 'The first characters of the token (as_admin_…), to tell tokens apart.' }),
    role,
    createdBy: Type.Union([Type.String(), Type.Null()], {
      description:
        'The id of the admin token that made this one through the admin API: revoking it, or any token above it, revokes this one too. Null for a token made with the CLI (by an operator with the database).',
    }),
    createdAt: time('When the token was created.'),
    revokedAt: nullableTime('When the token was revoked; null while it works.'),
  },
  { $id: 'AdminTokenSummary', title: 'AdminTokenSummary', additionalProperties: false },
)
export type AdminTokenSummary = Static<typeof AdminTokenSummarySchema>

export const tokenName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: NOT_BLANK,
  allOf: [{ pattern: NO_CONTROL_CHARACTERS }],
  description: `Who or what the token is for: 1 to 100 characters, not only white space, no control characters, no text-direction or invisible characters (${HIDDEN_CHARACTERS_TEXT}).`,
  example: 'auditor (Dana)',
})
