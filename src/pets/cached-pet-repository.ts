import { LRUCache } from 'lru-cache'
import type { Int64 } from '../shared/int64.js'
import type { IdempotencyClaim, IdempotentCreate, ListPetsOptions, PetRepository } from './repository.js'
import type { NewPet, Pet } from './schemas.js'

/** Pets kept by getPet: about 100 bytes each (plus the answer the route keeps beside each). */
export const PETS_KEPT = 10_000
/** Bounds the page cache: at most this many pets held by each kind of page (full, tail). */
const PAGE_CACHE_PETS = 10_000
/** Pages asked for once, remembered (by key only) so that a second request admits the page to the cache. */
const PAGES_SEEN_ONCE = 1024

/**
 * Every cache of pets, in front of either store. What makes them right is one rule, stated and
 * relied on here only: **pets never change and are never deleted** (the API creates pets and
 * nothing else). So:
 * - a pet, once found, is that pet for good: it is kept (bounded) and shared, frozen. A miss is
 *   not kept: the id may be created later.
 * - where the store assigns ids in commit order (it then offers `catalogueVersion`), a page that
 *   came back full can never change: no later pet can get an id inside it. It is kept, frozen.
 * - a page that reached the end of the catalogue (a tail page) can grow: it is kept only while
 *   the store's catalogueVersion is the one it was read at, which also sees other processes' commits.
 * A store without catalogueVersion has its pages read every time.
 *
 * The day a pet can change or be deleted, this is the one place to change: the writer calls
 * `forget(id)` after its commit, and a change made by another process must reach `forget` too (a
 * change log, as for keys): a delete also breaks "a full page never changes".
 */
export class CachedPetRepository implements PetRepository {
  private readonly pets = new LRUCache<Int64, Pet>({ max: PETS_KEPT })
  private readonly fullPages = pageCache()
  private readonly tailPages = pageCache()
  /** The catalogueVersion the tail pages were read at. */
  private tailVersion = -1
  /**
   * The doorkeeper: a page is cached from its second request on. A page asked for once (a client
   * paging through the whole catalogue, a crawler) would otherwise be cached, outlive a
   * young-generation GC and be evicted soon after: old-generation garbage at every request,
   * which let the heap grow to several times its live size under a scan (bench growth section).
   */
  private readonly seenOnce = new LRUCache<string, true>({ max: PAGES_SEEN_ONCE })
  /** Bumped by forget(): a read that started before it is not kept. */
  private generation = 0

  constructor(private readonly store: PetRepository) {}

  /** The invalidation hook: after it, nothing read before is served again (pet `id` nor any page). */
  forget(id: Int64): void {
    this.generation++
    this.pets.delete(id)
    this.fullPages.clear()
    this.tailPages.clear()
  }

  // A create needs no invalidation: a new pet only ever lands on a tail page (catalogueVersion
  // moves), and a miss was never kept.
  createPet(pet: NewPet): Promise<Pet> {
    return this.store.createPet(pet)
  }

  createPetOnce(pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.store.createPetOnce(pet, claim)
  }

  deleteIdempotencyRecords(before: number): Promise<number> {
    return this.store.deleteIdempotencyRecords(before)
  }

  /** A cached page is a frozen array, the same one while it is kept (the list route keeps its answer by identity). */
  listPets(options: ListPetsOptions): Promise<readonly Pet[]> {
    if (this.store.catalogueVersion === undefined) return this.store.listPets(options)
    const key = `${options.limit}|${options.status ?? ''}|${options.afterId ?? 0}`
    const full = this.fullPages.peek(key)
    if (full !== undefined) return Promise.resolve(full)
    // Read before the page: the page is then at least as new as this version, and a commit after
    // it moves the version, which drops the page at the next request.
    const version = this.store.catalogueVersion()
    if (version !== this.tailVersion) {
      this.tailPages.clear()
      this.tailVersion = version
    }
    const tail = this.tailPages.peek(key)
    if (tail !== undefined) return Promise.resolve(tail)
    const generation = this.generation
    return this.store.listPets(options).then((rows) => this.admitPage(key, options.limit, rows, version, generation))
  }

  /** A cached pet is frozen, the same object while it is kept (the getPet route keeps its answer by identity). */
  getPet(id: Int64): Promise<Pet | undefined> {
    const kept = this.pets.get(id)
    if (kept !== undefined) return Promise.resolve(kept)
    const generation = this.generation
    return this.store.getPet(id).then((pet) => {
      if (pet === undefined || generation !== this.generation) return pet
      const shared = Object.freeze(pet)
      this.pets.set(id, shared)
      return shared
    })
  }

  private admitPage(key: string, limit: number, rows: readonly Pet[], version: number, generation: number): readonly Pet[] {
    if (generation !== this.generation) return rows
    if (!this.seenOnce.delete(key)) {
      this.seenOnce.set(key, true)
      return rows
    }
    const full = rows.length === limit
    // A tail page read at an older version than the tail pages now kept may miss their pets.
    if (!full && version !== this.tailVersion) return rows
    const page = Object.freeze(rows)
    ;(full ? this.fullPages : this.tailPages).set(key, page)
    return page
  }
}

/**
 * Pages of one kind, bounded by the pets they hold (101-pet pages would otherwise cost tens of MB),
 * oldest admitted out first: read with `peek`, so a hit does not reorder. An empty page counts as
 * one pet, so that empty pages are bounded too. No `max`: `clear()` (every commit, for the tail
 * pages) then fills arrays only as long as the most pages ever held, not a preallocated bound.
 */
function pageCache(): LRUCache<string, readonly Pet[]> {
  return new LRUCache<string, readonly Pet[]>({ maxSize: PAGE_CACHE_PETS, sizeCalculation: (page) => Math.max(1, page.length) })
}
