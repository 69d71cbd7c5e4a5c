import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { KeyIdParams, plan, ref } from '../common/schemas.js'
import { parseTime } from '../common/views.js'
import { AdminKeySchema, expiresAt, keyName, limit, metadata, scopes, tags } from './schemas.js'
import { assertStorableJson, keyJson } from './views.js'

export const UpdateKeyBody = Type.Object(
  {
    name: Type.Optional(keyName),
    plan: Type.Optional(plan),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    scopes: Type.Optional(scopes),
    expiresAt: Type.Optional(expiresAt),
    metadata: Type.Optional(metadata),
  },
  {
    $id: 'UpdateKey',
    title: 'UpdateKey',
    additionalProperties: false,
    description: 'Only the fields sent change (at least one); null clears expiresAt or metadata.',
  },
)
export type UpdateKeyBody = Static<typeof UpdateKeyBody>

/** PATCH /keys/{keyId} (updateKey). */
export function updateKey(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.patch(
    '/keys/:keyId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'updateKey',
        summary: 'Update an API key',
        description:
          'Changes name, plan, limits, scopes, metadata or expiry (scopes apply to the next request, on every instance within 2 s): only the fields sent; null clears expiresAt or metadata. ' +
          'All or nothing: a refused field changes nothing. Every instance applies it within 2 s. Written to the audit log. ' +
          'A revoked key, or one that was rotated (its successor takes the changes), is 409 `conflict`. ' +
          'Plan, limits and scopes apply to the keys it was rotated from that are still in their grace period as well. ' +
          "A key of a customer takes the customer's plan: its plan and limits are 400 here (change the customer).",
        tags,
        params: KeyIdParams,
        body: ref(UpdateKeyBody),
        response: {
          200: { description: 'The key as updated.', ...ref(AdminKeySchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { expiresAt, metadata, ...rest } = request.body
      if (Object.keys(request.body).length === 0) {
        throw new ApiError(
          'invalid_request',
          'body must name at least one field to change: name, plan, perMinute, perDay, scopes, metadata, expiresAt',
        )
      }
      if (metadata !== undefined) assertStorableJson(metadata, 'metadata')
      const patch = {
        ...rest,
        ...(expiresAt === undefined ? {} : { expiresAt: parseTime('expiresAt', expiresAt) }),
        ...(metadata === undefined ? {} : { metadata }),
      }
      return keyJson(await admin.updateKey(request.params.keyId, patch, changeContext(request)))
    },
  )
}
