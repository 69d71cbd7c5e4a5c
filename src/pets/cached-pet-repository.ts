import { LRUCache } from 'lru-cache'
import type { Int64 } from '../shared/int64.js'
import { Doorkeeper, PETS_KEPT, PetCache, pageCache, pageKey } from './kept-pages.js'
import type { ListPetsOptions, PetRepository } from './repository.js'
import type { Pet } from './schemas.js'

/**
 * Every cache of pets, in front of either store. Pets are created and never deleted; an existing
 * pet changes only by its status (orders: orders/state.ts). What keeps the caches exact is the
 * store's word on both, read before every answer from a cache:
 * - `changeVersion` moves at every change of an existing pet, by this process or any other: when
 *   it moved, every cache is dropped (found pets and pages), so a read after an acknowledged
 *   change shows it, on every instance, at once. A store without it has nothing cached here:
 *   PostgreSQL, which has no cheap, synchronous way to learn of other instances' commits, has
 *   CheckedPetRepository instead (pet-caches.ts).
 * - while no pet changed, a pet once found is that pet: it is kept (bounded) and shared, frozen. A
 *   miss is not kept: the id may be created later.
 * - where the store assigns ids in commit order (it then offers `catalogueVersion`), a page that
 *   came back full stays as it is while no pet changes: no later pet can get an id inside it. It
 *   is kept, frozen.
 * - a page that reached the end of the catalogue (a tail page) can grow: it is kept only while
 *   the store's catalogueVersion is the one it was read at, which also sees other processes' commits.
 * The versions are read before the store is asked, so what is kept is at least as new as the
 * version it is kept under. A read that started before a drop is not kept (`generation`).
 */
export class CachedPetRepository extends PetCache {
  private readonly pets = new LRUCache<Int64, Pet>({ max: PETS_KEPT })
  private readonly fullPages = pageCache()
  private readonly tailPages = pageCache()
  /** The catalogueVersion the tail pages were read at. */
  private tailVersion = -1
  /** The changeVersion everything kept was read at. */
  private changesSeen = -1
  private readonly doorkeeper = new Doorkeeper()
  /** Bumped when everything is dropped: a read that started before it is not kept. */
  private generation = 0

  /** Whether this store's pets can be cached at all (it tells of every commit and change). */
  private readonly cacheable: boolean

  constructor(store: PetRepository) {
    super(store)
    this.cacheable = store.catalogueVersion !== undefined && store.changeVersion !== undefined
  }

  /**
   * Reads the store's versions and drops what they outdate; returns the catalogue version. While
   * nothing was committed, that is one cheap read (a PRAGMA on SQLite); after a commit, the change
   * version too (a commit that changed a pet moves both).
   */
  private sync(): number {
    const version = this.store.catalogueVersion!()
    if (version !== this.tailVersion) {
      this.tailPages.clear()
      this.tailVersion = version
      const changes = this.store.changeVersion!()
      if (changes !== this.changesSeen) {
        this.changesSeen = changes
        this.generation++
        this.pets.clear()
        this.fullPages.clear()
      }
    }
    return version
  }

  // A create needs no drop: a new pet only ever lands on a tail page (catalogueVersion moves), and
  // a miss was never kept. A change (an order) is seen through changeVersion.

  /** A cached page is a frozen array, the same one while it is kept (the list route keeps its answer by identity). */
  listPets(options: ListPetsOptions): Promise<readonly Pet[]> {
    if (!this.cacheable) return this.store.listPets(options)
    // Read before the page: the page is then at least as new as this version, and a commit after
    // it moves the version, which drops the page (a tail page; any page after a change) at the next request.
    const version = this.sync()
    const key = pageKey(options)
    const kept = this.fullPages.peek(key) ?? this.tailPages.peek(key)
    if (kept !== undefined) return Promise.resolve(kept)
    const generation = this.generation
    return this.store.listPets(options).then((rows) => this.admitPage(key, options.limit, rows, version, generation))
  }

  /** A cached pet is frozen, the same object while it is kept (the getPet route keeps its answer by identity). */
  getPet(id: Int64): Promise<Pet | undefined> {
    if (!this.cacheable) return this.store.getPet(id)
    this.sync()
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
    if (!this.doorkeeper.admits(key)) return rows
    const full = rows.length === limit
    // A tail page read at an older version than the tail pages now kept may miss their pets.
    if (!full && version !== this.tailVersion) return rows
    const page = Object.freeze(rows)
    ;(full ? this.fullPages : this.tailPages).set(key, page)
    return page
  }
}
