import { Type } from 'typebox'
import { apiKeyOf } from '../../auth/admission.js'
import { errorResponses, rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { parseIdempotencyKey } from '../../idempotency/header.js'
import { NewOrderSchema, OrderSchema } from '../../orders/schemas.js'
import type { PublicApp, PublicRoutesOptions } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { orderPath, orderView } from './views.js'

/** POST /store/orders (placeOrder): the placement's rules are orders/placement.ts. */
export function placeOrder(app: PublicApp, { placement, holdMs }: PublicRoutesOptions): void {
  const holdText = `${holdMs / 60_000} minutes`
  app.post(
    '/store/orders',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'placeOrder',
        summary: 'Order an animal',
        description:
          `Places an order for an available animal and answers 201 with it: in the same transaction the animal turns \`pending\`, held for this order until \`expiresAt\` (${holdText} on this server: ORDER_HOLD_MINUTES). ` +
          'Then complete it (the animal is `sold`) or cancel it (`available` again); an order neither completed nor cancelled by then expires (`available` again). ' +
          'Of concurrent orders for one animal exactly one succeeds, on any number of instances. ' +
          'An animal that is pending, sold or has no status (not for sale) is 409 `pet_not_available` naming its status; a `petId` that names no animal is 422 `unknown_pet` ' +
          '(the path exists; the body refers to something that does not, as GitHub answers a reference to an unknown object in a body). ' +
          '`Idempotency-Key` works as on createPet (same scope and retention; one key names one request, so a key used on createPet is 422 here): ' +
          'a retry answers 201 with the order as it was placed and `Idempotent-Replayed: true`.',
        tags: ['store'],
        headers: Type.Object({
          'Idempotency-Key': Type.Optional(
            Type.String({
              description:
                'Makes the order safe to retry: 1 to 255 visible ASCII characters, quoted ("…") or bare. Scoped as the orders are (every key of the customer; for a key without one, the key and the keys it was rotated to), kept 24 hours.',
            }),
          ),
        }),
        body: ref(NewOrderSchema),
        response: {
          201: {
            description: 'Order placed: the animal is pending.',
            ...ref(OrderSchema),
            headers: {
              ...rateLimitHeaderDocs,
              Location: { type: 'string', description: 'Path of the new order, /v1/store/orders/{id}.' },
              'Idempotent-Replayed': {
                type: 'string',
                enum: ['true'],
                description: 'Present on a replay: an earlier request with this Idempotency-Key placed the order.',
              },
            },
          },
          ...errorResponses(
            400,
            401,
            // The 409 a client meets first (Swagger UI shows a response's first example): the animal is taken.
            'pet_not_available',
            'idempotency_conflict',
            413,
            415,
            'idempotency_key_reused',
            'unknown_pet',
            429,
            500,
            503,
          ),
        },
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.headers['idempotency-key'])
      const { order: placed, replayed } = await placement.place(apiKeyOf(request), request.body.petId, key)
      if (replayed) reply.header('idempotent-replayed', 'true')
      return reply.code(201).header('location', orderPath(placed)).send(orderView(placed))
    },
  )
}
