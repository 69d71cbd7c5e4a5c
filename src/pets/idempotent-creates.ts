import { fingerprint, type IdempotencyClaim } from '../idempotency/claim.js'
import { InFlight, inFlightError } from '../idempotency/in-flight.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import type { PetRecording, PetRepository } from './repository.js'
import type { NewPet, Pet } from './schemas.js'

/**
 * Idempotent creates (IETF draft-ietf-httpapi-idempotency-key-header): POST /v1/pets with an
 * Idempotency-Key creates the pet once per customer (`idempotencyScope`, idempotency/scope.ts) and
 * key; a retry with the same body replays the first answer, with another body it is refused (422),
 * and while the first is still being processed it is refused (409: idempotency/in-flight.ts).
 */

/** The canonical body: the validated fields in a fixed order (a number or a bigint categoryId alike). */
export const fingerprintOf = (pet: NewPet): string => fingerprint([pet.name, String(pet.categoryId), pet.status ?? null])

/**
 * The first answer again, byte for byte: the animal as it was created, which the request names
 * (the same fingerprint: the same fields) but for its id. It may have changed since (an order
 * moves its status); GET shows it as it is now.
 */
function asCreated(id: number, pet: NewPet): Pet {
  const created: Pet = { id, name: pet.name, categoryId: pet.categoryId }
  if (pet.status !== undefined) created.status = pet.status
  return created
}

export interface IdempotentResult {
  pet: Pet
  /** The pet was created by an earlier request with the same key and body. */
  replayed: boolean
}

export class IdempotentCreates {
  private readonly inFlight = new InFlight()

  constructor(
    private readonly pets: PetRepository,
    private readonly clock: Clock,
  ) {}

  /** Creates `pet` once for (scope, key), with what `recorded` makes of it; throws the ApiError to answer with when it must not. */
  create(scope: string, key: string, pet: NewPet, recorded?: PetRecording): Promise<IdempotentResult> {
    return this.inFlight.run(scope, key, async () => {
      const claim: IdempotencyClaim = { scope, key, fingerprint: fingerprintOf(pet), createdAt: this.clock.now() }
      const result = await this.pets.createPetOnce(pet, claim, recorded)
      switch (result.outcome) {
        case 'created':
          return { pet: result.pet, replayed: false }
        case 'replayed':
          return { pet: asCreated(result.pet.id, pet), replayed: true }
        case 'pet_missing':
          // A plain Error: answered 500 internal_error and logged, as any broken invariant.
          throw new Error(`the Idempotency-Key record names pet ${result.petId}, which is not in the store`)
        case 'in_flight':
          throw inFlightError()
        case 'reused':
          throw new ApiError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used with a different request body; use a new key for a new animal',
          )
      }
    })
  }
}
