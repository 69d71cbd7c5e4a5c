import type { FastifyInstance } from 'fastify'
import type { EntityTags } from '../http/conditional-reads.js'
import type { Clock } from '../shared/clock.js'
import type { OrderRepository } from './repository.js'
import { storeRoutes } from './routes.js'
import { InventorySchema, NewOrderSchema, OrderSchema, OrderStatusSchema } from './schemas.js'

export interface StoreApiOptions {
  orders: OrderRepository
  clock: Clock
  /** How long a placed order holds its animal (ORDER_HOLD_MINUTES), ms. */
  holdMs: number
  /** '' (relative links) or the public base URL. */
  linkBase: string
  /** The tags of the reads' answers (conditional reads). */
  entityTags: EntityTags
}

/**
 * The store as one unit for app.ts: its shared schemas (components of the public API's document,
 * which pets/index.ts registers first) and its routes under /v1. The expiry sweep is started by
 * app.ts with the other background jobs (orders/expiry.ts).
 */
export async function registerStoreApi(app: FastifyInstance, options: StoreApiOptions): Promise<void> {
  for (const schema of [OrderStatusSchema, NewOrderSchema, OrderSchema, InventorySchema]) app.addSchema(schema)
  await app.register(storeRoutes, { prefix: '/v1', ...options })
}
