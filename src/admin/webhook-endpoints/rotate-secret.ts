import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { DEFAULT_PREVIOUS_SECRET_SECONDS, MAX_PREVIOUS_SECRET_SECONDS } from '../../webhooks/secret.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { type AdminWebhookEndpointsOptions, EndpointIdParams, notFoundDoc, tags } from './schemas.js'
import { endpointWithSecretJson } from './views.js'

export const RotateWebhookSecretBody = Type.Object(
  {
    expiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_PREVIOUS_SECRET_SECONDS,
        default: DEFAULT_PREVIOUS_SECRET_SECONDS,
        description: `How long the current secret keeps signing beside the new one, in seconds: 0 ends it at once; at most ${MAX_PREVIOUS_SECRET_SECONDS} (7 days); default ${DEFAULT_PREVIOUS_SECRET_SECONDS} (24 hours).`,
        example: DEFAULT_PREVIOUS_SECRET_SECONDS,
      }),
    ),
  },
  { $id: 'RotateWebhookSecret', title: 'RotateWebhookSecret', additionalProperties: false },
)
export type RotateWebhookSecretBody = Static<typeof RotateWebhookSecretBody>

/** POST /webhook-endpoints/{endpointId}/rotate-secret (rotateWebhookEndpointSecret). */
export function rotateWebhookEndpointSecret(app: AdminApp, { webhookEndpoints }: AdminWebhookEndpointsOptions): void {
  app.post(
    '/webhook-endpoints/:endpointId/rotate-secret',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Rotate a webhook endpoint’s secret',
        description:
          'Makes a new signing secret, shown in this answer only. The current one keeps signing beside it until `previousSecretExpiresAt` ' +
          '(`expiresInSeconds`, default 24 hours): every delivery until then carries both signatures, so the receiver can switch to the new secret without failing one. ' +
          'A previous secret still signing from an earlier rotation stops now. Body: `{}` for the default. ' +
          'Written to the audit log (`webhook_endpoint.rotate_secret`, never a secret).',
        tags,
        params: EndpointIdParams,
        body: ref(RotateWebhookSecretBody),
        response: {
          200: {
            description: 'Rotated; `secret` (the new one) is shown only this once.',
            ...Type.Unsafe({ $ref: 'WebhookEndpointWithSecret#' }),
            headers: rateLimitHeaderDocs,
          },
          ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503),
          ...notFoundDoc,
        },
      },
    },
    async (request) =>
      endpointWithSecretJson(await webhookEndpoints.rotateSecret(request.params.endpointId, request.body, changeContext(request))),
  )
}
