import { fingerprint, type IdempotencyClaim } from '../idempotency/claim.js'
import { InFlight, inFlightError } from '../idempotency/in-flight.js'
import { idempotencyScope } from '../idempotency/scope.js'
import { type ApiKeyRecord, orderOwner } from '../keys/api-key.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import type { Int64 } from '../shared/int64.js'
import type { HoldEnds } from './hold.js'
import type { OrderRecord, OrderRepository, PlaceOutcome } from './repository.js'
import { OPEN_STATUS } from './state.js'

/**
 * SHA-256 of a placement's canonical body. Tagged with the operation: one Idempotency-Key names one
 * request, so the same key sent to POST /v1/pets and to POST /v1/store/orders is a reuse (422).
 */
export const orderFingerprint = (petId: Int64): string => fingerprint(['order', String(petId)])

export interface Placement {
  order: OrderRecord
  /** An earlier request with the same Idempotency-Key and body placed it. */
  replayed: boolean
}

/**
 * POST /v1/store/orders: places an order for the caller (`orderOwner` of its key), optionally under
 * an Idempotency-Key, as POST /v1/pets creates (pets/idempotent-creates.ts): same scope (the owner
 * of the orders: the key's customer, else its quota), same retention and sweep (one table), in
 * flight = handled by this process now, or (PostgreSQL) under the key's advisory lock in another
 * (idempotency/). Refusals throw the ApiError to answer with.
 */
export class OrderPlacement {
  private readonly inFlight = new InFlight()

  constructor(
    private readonly orders: OrderRepository,
    private readonly clock: Clock,
    private readonly holdEnds: HoldEnds,
  ) {}

  async place(apiKey: ApiKeyRecord, petId: Int64, idempotencyKey: string | undefined): Promise<Placement> {
    const order = { petId, owner: orderOwner(apiKey), keyId: apiKey.id, holdEnds: this.holdEnds }
    if (idempotencyKey === undefined) return settle(petId, await this.orders.placeOrder(order))
    const scope = idempotencyScope(apiKey)
    return this.inFlight.run(scope, idempotencyKey, async () => {
      // The record's time is this instance's, as a create's is: it only decides retention.
      const claim: IdempotencyClaim = { scope, key: idempotencyKey, fingerprint: orderFingerprint(petId), createdAt: this.clock.now() }
      return settle(petId, await this.orders.placeOrder(order, claim))
    })
  }
}

function settle(petId: Int64, result: PlaceOutcome): Placement {
  switch (result.outcome) {
    case 'placed':
      return { order: result.order, replayed: false }
    case 'replayed':
      // The first answer again, byte for byte: the order as it was placed (GET shows it as it is now).
      return { order: { ...result.order, status: OPEN_STATUS, endedAt: null }, replayed: true }
    case 'unknown_pet':
      throw new ApiError('unknown_pet', `petId ${petId} names no animal`)
    case 'not_available':
      throw new ApiError(
        'pet_not_available',
        result.petStatus === null
          ? `Animal ${petId} is not for sale: it has no status`
          : `Animal ${petId} is not available: it is ${result.petStatus}`,
      )
    case 'in_flight':
      throw inFlightError()
    case 'reused':
      throw new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request body or operation; use a new key for a new order',
      )
  }
}
