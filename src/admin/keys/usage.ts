import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { KeyIdParams, nullableTime, ref, time } from '../common/schemas.js'
import { tags } from './schemas.js'
import { usageJson } from './views.js'

const windowUsage = (window: string) =>
  Type.Object(
    {
      limit: Type.Integer({ description: `Requests allowed per ${window}.` }),
      used: Type.Integer({ description: 'Requests counted in the current window.' }),
      remaining: Type.Integer({ description: 'Requests left in it.' }),
      resetAt: time('When the window resets.'),
    },
    { additionalProperties: false, description: `The current ${window} window.` },
  )

export const KeyUsageSchema = Type.Object(
  {
    keyId: Type.String(),
    quotaId: Type.String({
      description:
        'The quota counted, whose windows these are: the customer’s id (cus_…) for a key of a customer (its keys share them), else the id of the first key of its rotation chain.',
    }),
    minute: windowUsage('minute'),
    day: windowUsage('UTC day'),
    ban: Type.Object(
      {
        active: Type.Boolean(),
        until: nullableTime('When the ban ends; null when not banned.'),
        level: Type.Integer({ description: 'Bans in a row (each doubles the next one); 0 after 24 hours without a ban.' }),
      },
      { additionalProperties: false },
    ),
    lastUsedAt: nullableTime('Last time a request authenticated with the key (batched: up to a few seconds late).'),
  },
  {
    $id: 'KeyUsage',
    title: 'KeyUsage',
    additionalProperties: false,
    description: 'The numbers the rate-limit headers show, read without counting a request.',
  },
)

/** GET /keys/{keyId}/usage (getKeyUsage): the limiter's counts now; their history is admin/usage/history.ts. */
export function getKeyUsage(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.get(
    '/keys/:keyId/usage',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getKeyUsage',
        summary: 'Usage of an API key',
        description:
          "The current minute and day counts of the key's quota, remaining, resets, ban state and last use: what the rate-limit headers show, without counting a request.",
        tags,
        params: KeyIdParams,
        response: {
          200: { description: 'Usage.', ...ref(KeyUsageSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => usageJson(await admin.keyUsage(request.params.keyId, changeContext(request))),
  )
}
