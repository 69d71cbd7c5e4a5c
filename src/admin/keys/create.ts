import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { customerId, plan, ref } from '../common/schemas.js'
import { parseTime } from '../common/views.js'
import { AdminKeySchema, expiresAt, keyName, limit, metadata, scopes, secret, tags } from './schemas.js'
import { assertStorableJson, createdKeyJson } from './views.js'

export const CreateKeyBody = Type.Object(
  {
    plan: Type.Optional(plan),
    name: keyName,
    customerId: Type.Optional(
      customerId(
        "The customer the key belongs to: it takes the customer's plan and limits (plan, perMinute and perDay are then refused) and shares its quota and orders.",
      ),
    ),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    scopes: Type.Optional(scopes),
    expiresAt: Type.Optional(expiresAt),
    metadata: Type.Optional(metadata),
  },
  { $id: 'CreateKey', title: 'CreateKey', additionalProperties: false },
)
export type CreateKeyBody = Static<typeof CreateKeyBody>

export const CreatedKeySchema = Type.Object(
  { key: secret, apiKey: ref(AdminKeySchema) },
  { $id: 'CreatedKey', title: 'CreatedKey', additionalProperties: false },
)

/** POST /keys (createKey). */
export function createKey(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.post(
    '/keys',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'createKey',
        summary: 'Create an API key',
        description:
          'Creates a key on a plan (required without a customer). Enterprise keys need perMinute and perDay; other plans refuse them. ' +
          "With `customerId`, the key belongs to the customer: it takes the customer's plan and limits (a plan or limit sent too is 400) and shares one quota with the customer's other keys (an unknown customer is 400 naming customerId). " +
          'The key itself is in the answer this once (only its SHA-256 is stored). Written to the audit log.',
        tags,
        body: ref(CreateKeyBody),
        response: {
          201: {
            description: 'Created; `key` is shown only this once.',
            ...ref(CreatedKeySchema),
            headers: { ...rateLimitHeaderDocs, Location: { type: 'string', description: 'Path of the new key, /admin/v1/keys/{keyId}.' } },
          },
          ...errorResponses(400, 401, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { expiresAt, metadata, ...rest } = request.body
      if (metadata !== undefined) assertStorableJson(metadata, 'metadata')
      const created = await admin.createKey({ ...rest, expiresAt: parseTime('expiresAt', expiresAt), metadata }, changeContext(request))
      return reply.code(201).header('location', `${ADMIN_PREFIX}/keys/${created.view.id}`).send(createdKeyJson(created))
    },
  )
}
