import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { KEY_STATES } from '../../keys/administration.js'
import {
  ADMIN_AUTH,
  ADMIN_PREFIX,
  type AdminApp,
  type AdminRoutesOptions,
  changeContext,
  errorResponses,
  link,
  linkHeaderDoc,
} from '../common/routes.js'
import { ADMIN_LIST_LIMIT, customerId, keyId, pageLimit, plan, ref } from '../common/schemas.js'
import { AdminKeySchema, tags } from './schemas.js'
import { keyPageJson } from './views.js'

export const KeyPageSchema = Type.Object(
  {
    data: Type.Array(ref(AdminKeySchema)),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `after` of the next page (also in the Link rel="next" header); null on the last page.',
    }),
  },
  { $id: 'KeyPage', title: 'KeyPage', additionalProperties: false },
)

export const ListKeysQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(
      keyId(
        'Return the keys listed after this one (newest first: created earlier, or at the same time with a lower id); follow Link rel="next" rather than build it.',
      ),
    ),
    plan: Type.Optional(plan),
    customerId: Type.Optional(customerId('Only the keys of this customer (an unknown customer is 400).')),
    state: Type.Optional(
      Type.Unsafe<(typeof KEY_STATES)[number]>({ type: 'string', enum: [...KEY_STATES], description: 'Only keys in this state.' }),
    ),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Only keys whose name contains this (case-insensitive).' }),
    ),
  },
  { additionalProperties: false },
)

/** GET /keys (listKeys). */
export function listKeys(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.get(
    '/keys',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listKeys',
        summary: 'List API keys',
        description:
          'Keys newest first (by creation time, then id, descending), optionally filtered; never the keys themselves. ' +
          'Paged with `after`, the id of the last key of a page (Link rel="next"): a key created while you page appears on no later page.',
        tags,
        querystring: ListKeysQuery,
        response: {
          200: { description: 'A page of keys.', ...ref(KeyPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, plan, customerId, state, name } = request.query
      const page = await admin.listKeys({ limit, after, plan, customerId, state, name }, changeContext(request))
      if (page.nextAfter !== null) {
        reply.header('link', link(`${ADMIN_PREFIX}/keys`, { limit, plan, customerId, state, name, after: page.nextAfter }))
      }
      return keyPageJson(page)
    },
  )
}
