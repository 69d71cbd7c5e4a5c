import { sendConditional } from '../../http/conditional-reads.js'
import { errorResponses, etagHeaderDoc, ifNoneMatchHeaders, notModifiedResponse, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { InventorySchema } from '../../orders/schemas.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { ref } from '../common/schemas.js'

/** GET /store/inventory (getInventory): the animals by status, exact in every transaction (migration 008's counts). */
export function getInventory(app: PublicApp, { orders, entityTags }: PublicRoutesOptions): void {
  app.get(
    '/store/inventory',
    {
      config: { conditional: true, scope: 'orders:read' },
      schema: {
        operationId: 'getInventory',
        summary: 'Count the animals by status',
        description:
          'How many animals are `available`, `pending` (held by a placed order) and `sold`: counts of animals, exact after every acknowledged change, on every instance. ' +
          'An animal created without a status is not for sale and is counted in none of them.',
        tags: ['store'],
        headers: ifNoneMatchHeaders,
        response: {
          200: { description: 'Success.', ...ref(InventorySchema), headers: { ...rateLimitHeaderDocs, ...etagHeaderDoc } },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const body = reply.serialize(await orders.inventory()) as string
      return sendConditional(request, reply, body, entityTags.of(body))
    },
  )
}
