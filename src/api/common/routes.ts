import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { EventRepository } from '../../events/event.js'
import type { EntityTags } from '../../http/conditional-reads.js'
import type { OrderPlacement } from '../../orders/placement.js'
import type { OrderRepository } from '../../orders/repository.js'
import type { IdempotentCreates } from '../../pets/idempotent-creates.js'
import type { PetRepository } from '../../pets/repository.js'
import type { Clock } from '../../shared/clock.js'

/** What every operation of the public API shares: where it is mounted, its services, how it links. */

export const V1_PREFIX = '/v1'

/** The app the operations are registered on (under V1_PREFIX), with the TypeBox type provider. */
export type PublicApp = Parameters<FastifyPluginAsyncTypebox>[0]

export interface PublicRoutesOptions {
  /** The catalogue, through its one cache (pets/cached-pet-repository.ts). */
  pets: PetRepository
  /** createPet under an Idempotency-Key. */
  creates: IdempotentCreates
  orders: OrderRepository
  placement: OrderPlacement
  /** How long a placed order holds its animal (ORDER_HOLD_MINUTES), ms: placeOrder's document says it. */
  holdMs: number
  /** Prefix of the links the operations build: '' for relative links (RFC 8288), or the public base URL. */
  linkBase: string
  /** The tags of the reads' answers (conditional reads). */
  entityTags: EntityTags
  /** The service's clock: the time of the events a route's change records. */
  clock: Clock
  /** The event log, read by GET /v1/events. */
  events: EventRepository
}
