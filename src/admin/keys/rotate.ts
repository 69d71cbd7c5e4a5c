import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { MAX_GRACE_SECONDS } from '../../keys/administration.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { KeyIdParams, ref } from '../common/schemas.js'
import { type AdminKey, AdminKeySchema, secret, tags } from './schemas.js'
import { rotatedKeyJson } from './views.js'

export const RotateKeyBody = Type.Object(
  {
    gracePeriodSeconds: Type.Integer({
      minimum: 0,
      maximum: MAX_GRACE_SECONDS,
      description: `How long the old key keeps working, in seconds: 0 revokes it at once; at most ${MAX_GRACE_SECONDS} (7 days).`,
      example: 86_400,
    }),
  },
  { $id: 'RotateKey', title: 'RotateKey', additionalProperties: false },
)
export type RotateKeyBody = Static<typeof RotateKeyBody>

export const RotatedKeySchema = Type.Object(
  {
    key: secret,
    apiKey: ref(AdminKeySchema),
    previous: Type.Unsafe<AdminKey>({ $ref: 'AdminKey#', description: 'The rotated key: expiresAt is the end of its grace period.' }),
  },
  { $id: 'RotatedKey', title: 'RotatedKey', additionalProperties: false },
)

/** POST /keys/{keyId}/rotate (rotateKey). */
export function rotateKey(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.post(
    '/keys/:keyId/rotate',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'rotateKey',
        summary: 'Rotate an API key',
        description:
          'Issues a new key with the same plan, limits, name, metadata and quota (one quota for both: rotation never doubles a limit). ' +
          'The old key keeps working for gracePeriodSeconds (0: revoked at once), then answers 401. Written to the audit log. ' +
          'A key that is revoked, was rotated already, or has expired is 409 `conflict`.',
        tags,
        params: KeyIdParams,
        body: ref(RotateKeyBody),
        response: {
          201: {
            description: 'Rotated; `key` (the new key) is shown only this once.',
            ...ref(RotatedKeySchema),
            headers: { ...rateLimitHeaderDocs, Location: { type: 'string', description: 'Path of the new key.' } },
          },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const rotated = await admin.rotateKey(request.params.keyId, { graceSeconds: request.body.gracePeriodSeconds }, changeContext(request))
      return reply.code(201).header('location', `${ADMIN_PREFIX}/keys/${rotated.view.id}`).send(rotatedKeyJson(rotated))
    },
  )
}
