import { LRUCache } from 'lru-cache'
import type { IdempotencyClaim } from '../idempotency/claim.js'
import type { Int64 } from '../shared/int64.js'
import type { IdempotentCreate, ListPetsOptions, PetRecording, PetRepository } from './repository.js'
import type { NewPet, Pet } from './schemas.js'

/** Pets kept by getPet: about 100 bytes each (plus the answer the route keeps beside each). */
export const PETS_KEPT = 10_000
/** Bounds the page cache: at most this many pets held by each kind of page (full, tail). */
const PAGE_CACHE_PETS = 10_000
/** Pages asked for once, remembered (by key only) so that a second request admits the page to the cache. */
const PAGES_SEEN_ONCE = 1024

/** A page's key in the caches of pets: what the store's listPets was asked. */
export const pageKey = (options: ListPetsOptions): string => `${options.limit}|${options.status ?? ''}|${options.afterId ?? 0}`

/**
 * Pages of one kind, bounded by the pets they hold (101-pet pages would otherwise cost tens of MB),
 * oldest admitted out first: read with `peek`, so a hit does not reorder. An empty page counts as
 * one pet, so that empty pages are bounded too. No `max`: `clear()` (every commit, for the tail
 * pages) then fills arrays only as long as the most pages ever held, not a preallocated bound.
 */
export function pageCache(): LRUCache<string, readonly Pet[]> {
  return new LRUCache<string, readonly Pet[]>({ maxSize: PAGE_CACHE_PETS, sizeCalculation: (page) => Math.max(1, page.length) })
}

/**
 * The doorkeeper: a page is cached from its second request on. A page asked for once (a client
 * paging through the whole catalogue, a crawler) would otherwise be cached, outlive a
 * young-generation GC and be evicted soon after: old-generation garbage at every request,
 * which let the heap grow to several times its live size under a scan (bench growth section).
 */
export class Doorkeeper {
  private readonly seenOnce = new LRUCache<string, true>({ max: PAGES_SEEN_ONCE })

  /** Whether the page under `key` was asked for before (then forgotten here: it is to be kept). */
  admits(key: string): boolean {
    if (this.seenOnce.delete(key)) return true
    this.seenOnce.set(key, true)
    return false
  }
}

/**
 * A cache of pets in front of `store`: the writes go to the store as they are (a create needs no
 * drop of its own: each cache learns of it as of any other commit), the reads are the cache's.
 */
export abstract class PetCache<Store extends PetRepository = PetRepository> implements PetRepository {
  constructor(protected readonly store: Store) {}

  createPet(pet: NewPet, recorded?: PetRecording): Promise<Pet> {
    return this.store.createPet(pet, recorded)
  }

  createPetOnce(pet: NewPet, claim: IdempotencyClaim, recorded?: PetRecording): Promise<IdempotentCreate> {
    return this.store.createPetOnce(pet, claim, recorded)
  }

  deleteIdempotencyRecords(before: number): Promise<number> {
    return this.store.deleteIdempotencyRecords(before)
  }

  abstract listPets(options: ListPetsOptions): Promise<readonly Pet[]>
  abstract getPet(id: Int64): Promise<Pet | undefined>
}
