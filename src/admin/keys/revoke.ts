import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { KeyIdParams, ref } from '../common/schemas.js'
import { AdminKeySchema, tags } from './schemas.js'
import { revokedKeyJson } from './views.js'

export const RevokedKeySchema = Type.Object(
  {
    apiKey: ref(AdminKeySchema),
    alreadyRevoked: Type.Boolean({ description: 'True when the key was revoked before (revokedAt keeps the first time).' }),
    alsoRevoked: Type.Array(ref(AdminKeySchema), {
      description:
        "The other keys of its rotation chain that were still in their grace period (rotated, still working), revoked with it, newest first; empty when there were none. The chain's current key is revoked only when it is the key named.",
    }),
  },
  { $id: 'RevokedKey', title: 'RevokedKey', additionalProperties: false },
)

/** POST /keys/{keyId}/revoke (revokeKey). */
export function revokeKey(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.post(
    '/keys/:keyId/revoke',
    {
      config: { ...ADMIN_AUTH, noBody: true },
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke an API key',
        description:
          'Revokes the key and every other key of its rotation chain still in its grace period (listed in `alsoRevoked`): a rotation replaces a compromised or old secret, so none of the old ones keeps working. ' +
          "The chain's current key is revoked only when it is the key named. " +
          'Idempotent: revoking a revoked key answers 200 with alreadyRevoked true and the first revocation time (and still ends any grace period left in its chain). ' +
          'Every instance refuses the keys within 2 s. No body (none, or `{}`). Written to the audit log, one `key.revoke` entry per key revoked (a repeated revoke too, with `alreadyRevoked: true`).',
        tags,
        params: KeyIdParams,
        response: {
          200: { description: 'Revoked.', ...ref(RevokedKeySchema), headers: rateLimitHeaderDocs },
          // A body is refused (none, or {}), but read first: 413 and 415 come from the body parser.
          ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      // No body: none, or `{}` for clients that always send one; anything else would be ignored, so it is refused.
      const body = request.body as unknown
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)) {
        throw new ApiError('invalid_request', 'revoke takes no body: send none, or {}')
      }
      return revokedKeyJson(await admin.revokeKey(request.params.keyId, changeContext(request)))
    },
  )
}
