import type { Int64 } from '../shared/int64.js'
import type { NewPet, Pet, PetStatus } from './schemas.js'

export interface ListPetsOptions {
  limit: number
  status?: PetStatus
  /** Keyset paging: only ids strictly greater than this. */
  afterId?: Int64
}

/** A create under an Idempotency-Key (see pets/idempotency.ts). */
export interface IdempotencyClaim {
  /** The API key's id: keys are scoped per API key. */
  keyId: string
  /** The Idempotency-Key value (unquoted). */
  key: string
  /** SHA-256 (hex) of the canonical request body. */
  fingerprint: string
  /** Epoch ms; records older than the retention are deleted. */
  createdAt: number
}

export type IdempotentCreate =
  /** First use of the key: the pet was created, and the record written in the same transaction. */
  | { outcome: 'created'; pet: Pet }
  /** The key was used before with the same body: the pet created then (pets never change). */
  | { outcome: 'replayed'; pet: Pet }
  /** The key was used before with a different body: nothing created. */
  | { outcome: 'reused' }
  /** Another transaction (another instance) holds the same key right now: nothing created. */
  | { outcome: 'in_flight' }

/** Storage of animals. Ids are assigned by the store, ascending, never reused. */
export interface PetRepository {
  /** Resolves once the pet is durable (per the configured durability). */
  createPet(pet: NewPet): Promise<Pet>
  /**
   * createPet under an Idempotency-Key: the pet and the key's record commit in one transaction,
   * so a crash after the commit can only lead to a replay, never to a second pet.
   */
  createPetOnce(pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate>
  /** Deletes the idempotency records created before `time` (epoch ms); resolves with how many. */
  deleteIdempotencyRecords(before: number): Promise<number>
  /**
   * Ascending id order. A store that caches pages returns a cached page as a frozen array, the
   * same one again only while that page is unchanged; the list route keeps the serialized answer
   * of a frozen page by the array's identity (and of no other array: each would be one entry
   * per request, kept past a young-generation GC).
   */
  listPets(options: ListPetsOptions): Promise<readonly Pet[]>
  getPet(id: Int64): Promise<Pet | undefined>
}
