import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, type AdminRoutesOptions, changeContext, errorResponses } from '../common/routes.js'
import { KeyIdParams, ref } from '../common/schemas.js'
import { AdminKeySchema, tags } from './schemas.js'
import { keyJson } from './views.js'

/** GET /keys/{keyId} (getKey). */
export function getKey(app: AdminApp, { admin }: AdminRoutesOptions): void {
  app.get(
    '/keys/:keyId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getKey',
        summary: 'Get an API key',
        tags,
        params: KeyIdParams,
        response: {
          200: { description: 'The key.', ...ref(AdminKeySchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => keyJson(await admin.getKey(request.params.keyId, changeContext(request))),
  )
}
