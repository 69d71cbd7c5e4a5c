import { type Static, Type } from 'typebox'
import { ADMIN_TOKEN_ROLES, type AdminTokenRecord } from '../../admin-tokens/admin-token-repository.js'
import { adminTokenOf } from '../../auth/admission.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, errorResponses } from '../common/routes.js'
import { ref, time } from '../common/schemas.js'

/** The admin token a call presents, as it may see itself: never the token, nor its hash. */
export const AdminTokenSchema = Type.Object(
  {
    id: Type.String({ description: 'The token id (adm_…): the actor id of its audit entries.' }),
    name: Type.String({ description: 'Who or what the token is for, as given to `admin-tokens create --name`.' }),
    prefix: Type.String({ description: 'The first characters of the token (as_admin_…), to tell tokens apart.' }),
    role: Type.Unsafe<(typeof ADMIN_TOKEN_ROLES)[number]>({
      type: 'string',
      enum: [...ADMIN_TOKEN_ROLES],
      description:
        '`read`: reads only (keys, usage, the audit log, orders); every change is refused 403 `forbidden_role`. `admin`: everything.',
    }),
    createdAt: time('When the token was created.'),
  },
  { $id: 'AdminToken', title: 'AdminToken', additionalProperties: false },
)
export type AdminTokenJson = Static<typeof AdminTokenSchema>

export const adminTokenView = (token: AdminTokenRecord): AdminTokenJson => ({
  id: token.id,
  name: token.name,
  prefix: token.prefix,
  role: token.role,
  createdAt: new Date(token.createdAt).toISOString(),
})

/**
 * GET /token (getAdminToken): who the caller is. The console asks it at sign-in, to show the
 * operator's name and role and to hide what a read token may not do. Not audited: it tells the
 * caller only of the token it holds, as the admin document tells it only what it may call.
 */
export function getAdminToken(app: AdminApp): void {
  app.get(
    '/token',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getAdminToken',
        summary: 'Get the admin token of this call',
        description: 'The presented admin token: its id, name, prefix and role (what it may do). Any role may call it.',
        tags: ['token'],
        response: {
          200: { description: 'The token.', ...ref(AdminTokenSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request) => adminTokenView(adminTokenOf(request)),
  )
}
