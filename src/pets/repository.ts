import type { Int64 } from '../int64.js'
import type { NewPet, Pet, PetStatus } from './schemas.js'

export interface ListPetsOptions {
  limit: number
  status?: PetStatus
  /** Keyset paging: only ids strictly greater than this. */
  afterId?: Int64
}

/** Storage of animals. Ids are assigned by the store, ascending, never reused. */
export interface PetRepository {
  /** Resolves once the pet is durable (per the configured durability). */
  createPet(pet: NewPet): Promise<Pet>
  /** Ascending id order. The result may be shared (cached): callers must not mutate it. */
  listPets(options: ListPetsOptions): Promise<Pet[]>
  getPet(id: Int64): Promise<Pet | undefined>
}
