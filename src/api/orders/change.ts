import { apiKeyOf } from '../../auth/admission.js'
import { errorResponses, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { orderOwner } from '../../keys/api-key.js'
import type { OrderRecord } from '../../orders/repository.js'
import { OrderIdParams, OrderSchema } from '../../orders/schemas.js'
import type { ClientChange } from '../../orders/state.js'
import { ApiError } from '../../shared/errors.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { orderNotFound, orderView } from './views.js'

/** What cancel and complete share: a change of a placed order by its owner, with no body. The words are each operation's. */
export interface OrderChangeWords {
  change: ClientChange
  operationId: string
  summary: string
  /** The description's first sentence: what the change does. */
  does: string
  /** The 200's description. */
  done: string
}

const notPlaced = (record: OrderRecord, change: ClientChange) =>
  new ApiError(
    'order_not_placed',
    `Order ${record.id} cannot be ${change === 'cancel' ? 'cancelled' : 'completed'}: it is ${record.status}`,
  )

/** POST /store/orders/{orderId}/<change>: the state machine is orders/state.ts, enforced by the store. */
export function registerOrderChange(app: PublicApp, { orders }: PublicRoutesOptions, words: OrderChangeWords): void {
  const { change } = words
  app.post(
    `/store/orders/:orderId/${change}`,
    {
      config: { noBody: true, scope: 'orders:write' },
      schema: {
        operationId: words.operationId,
        summary: words.summary,
        description:
          words.does +
          'Only a placed order changes: a cancelled, completed or expired one is 409 `order_not_placed` naming its status, also when its hold ran out a moment ago and the sweep has not run yet. ' +
          "Another caller's order is 404. No body (none, or `{}`).",
        tags: ['store'],
        params: OrderIdParams,
        response: {
          200: { description: words.done, ...ref(OrderSchema), headers: rateLimitHeaderDocs },
          // A body is refused (none, or {}), but read first: 413 and 415 come from the body parser.
          ...errorResponses(400, 401, 404, 'order_not_placed', 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      // None, or `{}` for clients that always send one; anything else would be ignored, so it is refused.
      const body = request.body as unknown
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0))
        throw new ApiError('invalid_request', `${change} takes no body: send none, or {}`)
      const id = request.params.orderId
      const result = await orders.changeOrder(id, change, { owner: orderOwner(apiKeyOf(request)) })
      if (result.outcome === 'not_found') throw orderNotFound(id)
      if (result.outcome === 'not_placed') throw notPlaced(result.order, change)
      return orderView(result.order)
    },
  )
}
