import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Static, type TSchema, Type } from 'typebox'
import { type EntityTags, sendConditional } from '../http/conditional-reads.js'
import { errorResponses, etagHeaderDoc, ifNoneMatchHeaders, notModifiedResponse, rateLimitHeaderDocs } from '../http/openapi-docs.js'
import { parseIdempotencyKey } from '../idempotency/header.js'
import { orderOwner } from '../keys/api-key.js'
import { LIST_LIMIT } from '../pets/schemas.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import type { Int64 } from '../shared/int64.js'
import { holdRule } from './hold.js'
import { OrderPlacement } from './placement.js'
import type { OrderRecord, OrderRepository } from './repository.js'
import { InventorySchema, ListOrdersQuery, NewOrderSchema, type Order, OrderIdParams, OrderSchema } from './schemas.js'
import type { ClientChange } from './state.js'

export interface StoreRoutesOptions {
  orders: OrderRepository
  clock: Clock
  /** How long a placed order holds its animal (ORDER_HOLD_MINUTES), ms. */
  holdMs: number
  /** Prefix of the links the routes build: '' for relative links, or an absolute origin. */
  linkBase: string
  /** The tags of the reads' answers. */
  entityTags: EntityTags
}

/** A reference to a shared schema (a component in the OpenAPI document), typed as the schema. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>({ $ref: `${String((schema as { $id?: string }).$id)}#` })
const order = ref(OrderSchema)

const iso = (ms: number) => new Date(ms).toISOString()

/** An order as the API shows it. */
export function orderView(record: OrderRecord): Order {
  const view: Order = {
    id: record.id,
    petId: record.petId,
    status: record.status,
    createdAt: iso(record.createdAt),
    expiresAt: iso(record.expiresAt),
  }
  if (record.endedAt !== null) view.endedAt = iso(record.endedAt)
  return view
}

const location = (record: OrderRecord) => `/v1/store/orders/${record.id}`

/** The answers of a change that cannot be made. */
const notFound = (id: Int64) => new ApiError('not_found', `No order with id ${id}`)
const notPlaced = (record: OrderRecord, change: ClientChange) =>
  new ApiError(
    'order_not_placed',
    `Order ${record.id} cannot be ${change === 'cancel' ? 'cancelled' : 'completed'}: it is ${record.status}`,
  )

/**
 * The store under /v1: orders that reserve an animal and sell it (the state machines of
 * orders/state.ts, enforced by the store), and the inventory. A caller sees its own orders only
 * (`orderOwner` of its key): another's order is 404, as if it did not exist.
 */
export const storeRoutes: FastifyPluginAsyncTypebox<StoreRoutesOptions> = async (app, { orders, clock, holdMs, linkBase, entityTags }) => {
  const placement = new OrderPlacement(orders, clock, holdRule(holdMs))
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
            ...order,
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
            'idempotency_conflict',
            'pet_not_available',
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
      const { order: placed, replayed } = await placement.place(request.apiKey!, request.body.petId, key)
      if (replayed) reply.header('idempotent-replayed', 'true')
      return reply.code(201).header('location', location(placed)).send(orderView(placed))
    },
  )

  app.get(
    '/store/orders',
    {
      config: { conditional: true, scope: 'orders:read' },
      schema: {
        operationId: 'listOrders',
        summary: 'List your orders',
        description:
          "Returns up to `limit` of the caller's orders (placed with this API key or the keys of its rotation chain, or, for a key of a customer, any key of the customer) in ascending id order, optionally only those with `status`. " +
          'When more exist, a `Link: <...>; rel="next"` header gives the next page; the body is a bare array, as listPets answers. ' +
          'A placed order whose hold ran out shows `expired` once the expiry sweep has run (ORDER_SWEEP_MS); a change of it is refused at once.',
        tags: ['store'],
        querystring: ListOrdersQuery,
        headers: ifNoneMatchHeaders,
        response: {
          200: {
            description: 'Success: an array of orders.',
            type: 'array',
            items: order,
            headers: {
              ...rateLimitHeaderDocs,
              ...etagHeaderDoc,
              Link: { type: 'string', description: 'rel="next": the next page, present only when more orders exist.' },
            },
          },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = LIST_LIMIT.default, status, after } = request.query
      const rows = await orders.listOrders({ limit: limit + 1, owner: orderOwner(request.apiKey!), status, afterId: after })
      let link: string | undefined
      if (rows.length > limit) {
        const filter = status === undefined ? '' : `&status=${status}`
        link = `<${linkBase}/v1/store/orders?limit=${limit}${filter}&after=${rows[limit - 1]!.id}>; rel="next"`
        reply.header('link', link)
      }
      const body = reply.serialize(rows.slice(0, limit).map(orderView)) as string
      return sendConditional(request, reply, body, entityTags.of(body, link))
    },
  )

  app.get(
    '/store/orders/:orderId',
    {
      config: { conditional: true, scope: 'orders:read' },
      schema: {
        operationId: 'getOrder',
        summary: 'Get one of your orders',
        description: "One of the caller's orders; another caller's order is 404, as an order that does not exist.",
        tags: ['store'],
        params: OrderIdParams,
        headers: ifNoneMatchHeaders,
        response: {
          200: { description: 'Success.', ...order, headers: { ...rateLimitHeaderDocs, ...etagHeaderDoc } },
          ...notModifiedResponse,
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const id = request.params.orderId
      const found = await orders.getOrder(id, { owner: orderOwner(request.apiKey!) })
      if (found === undefined) throw notFound(id)
      const body = reply.serialize(orderView(found)) as string
      return sendConditional(request, reply, body, entityTags.of(body))
    },
  )

  for (const change of ['cancel', 'complete'] as const) {
    const cancel = change === 'cancel'
    app.post(
      `/store/orders/:orderId/${change}`,
      {
        config: { noBody: true, scope: 'orders:write' },
        schema: {
          operationId: cancel ? 'cancelOrder' : 'completeOrder',
          summary: cancel ? 'Cancel one of your orders' : 'Complete one of your orders',
          description:
            (cancel
              ? 'Cancels a placed order: the order is `cancelled` and its animal `available` again, in one transaction. '
              : 'Completes a placed order: the order is `completed` and its animal `sold`, in one transaction. ') +
            'Only a placed order changes: a cancelled, completed or expired one is 409 `order_not_placed` naming its status, also when its hold ran out a moment ago and the sweep has not run yet. ' +
            "Another caller's order is 404. No body (none, or `{}`).",
          tags: ['store'],
          params: OrderIdParams,
          response: {
            200: { description: cancel ? 'Order cancelled.' : 'Order completed.', ...order, headers: rateLimitHeaderDocs },
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
        const result = await orders.changeOrder(id, change, { owner: orderOwner(request.apiKey!) })
        if (result.outcome === 'not_found') throw notFound(id)
        if (result.outcome === 'not_placed') throw notPlaced(result.order, change)
        return orderView(result.order)
      },
    )
  }

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
