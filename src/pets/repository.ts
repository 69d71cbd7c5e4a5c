import type { RecordedChange } from '../changes/audit-log.js'
import type { IdempotencyClaim } from '../idempotency/claim.js'
import type { IdempotencyRecords } from '../idempotency/sweep.js'
import type { Int64 } from '../shared/int64.js'
import type { NewPet, Pet, PetStatus } from './schemas.js'

export interface ListPetsOptions {
  limit: number
  status?: PetStatus
  /** Keyset paging: only ids strictly greater than this. */
  afterId?: Int64
}

export type IdempotentCreate =
  /** First use of the key: the pet was created, and the record written in the same transaction. */
  | { outcome: 'created'; pet: Pet }
  /** The key was used before with the same body: the pet created then. */
  | { outcome: 'replayed'; pet: Pet }
  /**
   * The key was used before with the same body, but the pet it created is not there (which no
   * operation does today: the caller answers an error). Nothing created.
   */
  | { outcome: 'pet_missing'; petId: Int64 }
  /** The key was used before with a different body: nothing created. */
  | { outcome: 'reused' }
  /** Another transaction (another instance) holds the same key right now: nothing created. */
  | { outcome: 'in_flight' }

/**
 * What a creation records of the pet it created, written in its transaction (changes/): a client's
 * create its `pet.created` event (pets/events.ts; no audit entry: the audit log records operators).
 */
export type PetRecording = (pet: Pet) => RecordedChange

/** PetRepository.petChangesSince's answer. */
export interface PetChanges {
  /** Where this answer was read (a snapshot of the store): the next call asks from here. */
  readonly mark: string
  /** The lowest id among the pets created or changed since the mark asked from; undefined when none (or no mark). */
  readonly lowestId: Int64 | undefined
}

/**
 * Storage of animals. Ids are assigned by the store, ascending, never reused. It keeps the
 * Idempotency-Key records too (one table with the orders'; idempotency/).
 */
export interface PetRepository extends IdempotencyRecords {
  /** Resolves once the pet is durable (per the configured durability), and what `recorded` makes of it with it. */
  createPet(pet: NewPet, recorded?: PetRecording): Promise<Pet>
  /**
   * createPet under an Idempotency-Key: the pet and the key's record commit in one transaction,
   * so a crash after the commit can only lead to a replay, never to a second pet. A replay records nothing.
   */
  createPetOnce(pet: NewPet, claim: IdempotencyClaim, recorded?: PetRecording): Promise<IdempotentCreate>
  /**
   * Ascending id order. A frozen array is a page shared with later callers (CachedPetRepository),
   * the same one again only while that page is unchanged.
   */
  listPets(options: ListPetsOptions): Promise<readonly Pet[]>
  /** A frozen pet is shared with later callers (CachedPetRepository), the same one while it is unchanged. */
  getPet(id: Int64): Promise<Pet | undefined>
  /**
   * Offered by a store that assigns ids in commit order and can tell, cheaply and synchronously,
   * that pets were committed (by this process or any other): a number that changes at every such
   * commit. CachedPetRepository caches pages only for such a store (with changeVersion).
   */
  catalogueVersion?(): number
  /**
   * Offered by a store that can tell, cheaply and synchronously, that an existing pet changed (its
   * status, by an order; by this process or any other): a number that changes at every such
   * commit. CachedPetRepository caches pets and pages only for such a store.
   */
  changeVersion?(): number
  /**
   * Offered by a store that cannot tell synchronously of other processes' commits, nor assigns ids
   * in commit order (PostgreSQL), but can tell in one round trip which pets were created or changed
   * by commits since an earlier answer's mark (without one: a mark to start from).
   * CheckedPetRepository caches pets and pages for such a store.
   */
  petChangesSince?(mark: string | undefined): Promise<PetChanges>
}
