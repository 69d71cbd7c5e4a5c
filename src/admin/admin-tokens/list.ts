import { Type } from 'typebox'
import { adminTokenJson } from '../../admin-tokens/admin-tokens.js'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, errorResponses, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, pageLimit, ref } from '../common/schemas.js'
import { ADMIN_TOKEN_ID_PATTERN, type AdminTokenRoutesOptions, AdminTokenSummarySchema, tags } from './schemas.js'

export const AdminTokenPageSchema = Type.Object(
  {
    data: Type.Array(ref(AdminTokenSummarySchema)),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `after` of the next page (also in the Link rel="next" header); null on the last page.',
    }),
  },
  { $id: 'AdminTokenPage', title: 'AdminTokenPage', additionalProperties: false },
)

export const ListAdminTokensQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(
      Type.String({
        pattern: ADMIN_TOKEN_ID_PATTERN,
        description: 'Return the tokens listed after this one (newest first); follow Link rel="next" rather than build it.',
      }),
    ),
  },
  { additionalProperties: false },
)

/**
 * GET /admin-tokens (listAdminTokens). Paged in memory over the store's whole list: admin tokens
 * are a handful (one per operator or tool), never deleted, so no store query of its own is worth
 * its SQL in two engines. Not audited: the list holds no secret, as GET /token is not (and a read
 * action would mean recreating the audit log's kind indexes, migrations 009/010, for no record
 * anyone asked for).
 */
export function listAdminTokens(app: AdminApp, { adminTokens }: AdminTokenRoutesOptions): void {
  app.get(
    '/admin-tokens',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listAdminTokens',
        summary: 'List admin tokens',
        description:
          'Admin tokens newest first (by creation time, then id, descending), revoked ones included; never the tokens themselves. ' +
          'Any role may call it. Paged with `after`, the id of the last token of a page (Link rel="next"). Not written to the audit log.',
        tags,
        querystring: ListAdminTokensQuery,
        response: {
          200: {
            description: 'A page of admin tokens.',
            ...ref(AdminTokenPageSchema),
            headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc },
          },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after } = request.query
      const all = (await adminTokens.list()).sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      let start = 0
      if (after !== undefined) {
        start = all.findIndex((t) => t.id === after) + 1
        if (start === 0) throw new ApiError('invalid_request', `after: no admin token has the id ${after}`)
      }
      const page = all.slice(start, start + limit)
      const nextAfter = start + limit < all.length ? page[page.length - 1]!.id : null
      if (nextAfter !== null) reply.header('link', link(`${ADMIN_PREFIX}/admin-tokens`, { limit, after: nextAfter }))
      return { data: page.map(adminTokenJson), nextAfter }
    },
  )
}
