import { LRUCache } from 'lru-cache'
import type { Int64 } from '../shared/int64.js'
import { Doorkeeper, PETS_KEPT, PetCache, pageCache, pageKey } from './kept-pages.js'
import type { ListPetsOptions, PetRepository } from './repository.js'
import type { Pet } from './schemas.js'

/** The checks whose drops are remembered, for the reads in flight across them (a read spans a few at most). */
const DROPS_KEPT = 64

/** A store that tells of commits when asked. */
export type CheckedStore = PetRepository & Required<Pick<PetRepository, 'petChangesSince'>>

/** What one check of the store dropped: every pet and page from `lowestId` on (0: everything). */
interface Drop {
  /** The check's number (CheckedPetRepository.checks after it). */
  check: number
  lowestId: Int64
}

/**
 * The caches of pets in front of a store that tells of other processes' commits only when asked,
 * in one round trip (`petChangesSince`: PostgreSQL, where ids are not even assigned in commit
 * order). Exact across instances, with no notification per write:
 * - An answer from a cache waits for a check of the store that began after the request reached
 *   this method (`fresh`). A check reports the lowest id among the pets created or changed since
 *   the previous one, and drops before anyone reads what it outdates: every tail page (a page that
 *   reached the end of the catalogue) and every found pet, and each full page that reaches that id.
 *   A full page ends at its last id: a pet created or changed above it is not in it, whatever
 *   order ids commit in. So what is answered is as new as the check, which is newer than the request.
 * - Checks run one at a time, in order; the requests that arrive while one is in flight share the
 *   next one. Under load that is one small statement for a whole batch of requests.
 * - A miss reads the store itself, with no check: its answer is the store's present. It is kept
 *   only if the cache was checked before it began (a mark to compare with), and no check since
 *   then dropped what it holds: a read that began before a change it does not show would
 *   otherwise outlive the drop that reported that change.
 * - A check that fails drops everything and starts over (no mark); pages are kept again after the
 *   next check that succeeds. The reads themselves fail as they would without the cache.
 * Pets are created and never deleted (as for CachedPetRepository).
 */
export class CheckedPetRepository extends PetCache<CheckedStore> {
  private readonly pets = new LRUCache<Int64, Pet>({ max: PETS_KEPT })
  private readonly fullPages = pageCache()
  private readonly tailPages = pageCache()
  private readonly doorkeeper = new Doorkeeper()
  /** The store's mark of the last check; undefined before the first (or after a failed one): nothing is kept then. */
  private mark: string | undefined
  /** Checks ended so far, each numbered by it. */
  private checks = 0
  private readonly drops: Drop[] = []
  /** The last check dropped from the log: a read that began before it cannot be judged, and is not kept. */
  private forgotten = 0
  private inFlight: Promise<void> | undefined
  private queued: Promise<void> | undefined

  /** A kept page is a frozen array, the same one while it is kept (the list route keeps its answer by identity). */
  async listPets(options: ListPetsOptions): Promise<readonly Pet[]> {
    const key = pageKey(options)
    if (this.fullPages.has(key) || this.tailPages.has(key)) {
      await this.fresh()
      const kept = this.fullPages.peek(key) ?? this.tailPages.peek(key)
      if (kept !== undefined) return kept
    }
    const began = this.readBegins()
    const rows = await this.store.listPets(options)
    if (began === undefined) return rows
    const full = rows.length === options.limit && rows.length > 0
    const dropped = this.droppedSince(began)
    // A tail page can gain any pet; a full page only one at or below its last id.
    if (dropped !== undefined && (!full || dropped <= rows[rows.length - 1]!.id)) return rows
    if (!this.doorkeeper.admits(key)) return rows
    const page = Object.freeze(rows)
    ;(full ? this.fullPages : this.tailPages).set(key, page)
    return page
  }

  /** A kept pet is frozen, the same object while it is kept (the getPet route keeps its answer by identity). */
  async getPet(id: Int64): Promise<Pet | undefined> {
    if (this.pets.has(id)) {
      await this.fresh()
      const kept = this.pets.get(id)
      if (kept !== undefined) return kept
    }
    const began = this.readBegins()
    const pet = await this.store.getPet(id)
    if (pet === undefined || began === undefined) return pet
    const dropped = this.droppedSince(began)
    if (dropped !== undefined && dropped <= id) return pet
    const shared = Object.freeze(pet)
    this.pets.set(id, shared)
    return shared
  }

  /** The check count a read of the store begins at; undefined when what it reads cannot be kept (no mark yet: one is asked for). */
  private readBegins(): number | undefined {
    if (this.mark !== undefined) return this.checks
    void this.fresh()
    return undefined
  }

  /** Resolves after a check that began after this call, its drops made. Never rejects. */
  private fresh(): Promise<void> {
    if (this.inFlight === undefined) {
      this.inFlight = this.check().finally(() => {
        this.inFlight = undefined
      })
      return this.inFlight
    }
    // The one in flight may have read the store before this call: the next one, shared by all who wait for it.
    this.queued ??= this.inFlight.then(() => {
      this.queued = undefined
      return this.fresh()
    })
    return this.queued
  }

  private async check(): Promise<void> {
    let lowestId: Int64 | undefined
    let mark: string | undefined
    try {
      ;({ mark, lowestId } = await this.store.petChangesSince(this.mark))
    } catch {
      lowestId = 0
    }
    this.checks++
    // No mark before: nothing was kept (a failed check dropped it all).
    if (this.mark !== undefined && lowestId !== undefined) this.drop(lowestId)
    this.mark = mark
  }

  private drop(lowestId: Int64): void {
    this.drops.push({ check: this.checks, lowestId })
    if (this.drops.length > DROPS_KEPT) this.forgotten = this.drops.shift()!.check
    this.tailPages.clear()
    this.pets.clear()
    if (lowestId <= 0) {
      this.fullPages.clear()
      return
    }
    const outdated: string[] = []
    for (const [key, page] of this.fullPages.entries()) if (page[page.length - 1]!.id >= lowestId) outdated.push(key)
    for (const key of outdated) this.fullPages.delete(key)
  }

  /** The lowest id dropped by the checks that ended after check `began` (0 when they are not all remembered); undefined when none dropped. */
  private droppedSince(began: number): Int64 | undefined {
    if (began === this.checks) return undefined
    if (began < this.forgotten) return 0
    let lowest: Int64 | undefined
    for (let i = this.drops.length - 1; i >= 0 && this.drops[i]!.check > began; i--) {
      const { lowestId } = this.drops[i]!
      if (lowest === undefined || lowestId < lowest) lowest = lowestId
    }
    return lowest
  }
}
