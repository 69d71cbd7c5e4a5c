import { CachedPetRepository } from './cached-pet-repository.js'
import { CheckedPetRepository, type CheckedStore } from './checked-pet-repository.js'
import type { PetRepository } from './repository.js'

/**
 * The one cache of pets in front of a store, by what the store can tell of commits: checked in a
 * round trip where it offers one (PostgreSQL), else by its synchronous versions (SQLite; a store
 * with neither has every read asked of it).
 */
export function cachedPets(store: PetRepository): PetRepository {
  return store.petChangesSince === undefined ? new CachedPetRepository(store) : new CheckedPetRepository(store as CheckedStore)
}
