import type Database from 'better-sqlite3'
import type { IdempotencyClaim } from '../../idempotency/claim.js'
import type { IdempotentCreate, ListPetsOptions, PetRecording, PetRepository } from '../../pets/repository.js'
import type { NewPet, Pet, PetStatus } from '../../pets/schemas.js'
import { type Int64, toInt64 } from '../../shared/int64.js'
import { type PetRow, toPet } from '../pet-row.js'
import type { CatalogueClock } from './catalogue-clock.js'
import { writeChange } from './write-change.js'

interface PendingInsert {
  pet: NewPet
  claim: IdempotencyClaim | undefined
  recorded: PetRecording | undefined
  resolve: (created: IdempotentCreate) => void
  reject: (error: unknown) => void
}

/** Idempotency records deleted per transaction: the sweep never holds the write lock for long. */
const DELETE_BATCH = 1000

export class SqlitePetRepository implements PetRepository {
  private readonly insert
  private readonly byId
  private readonly page
  private readonly pageByStatus
  private readonly findClaim
  private readonly insertClaim
  private readonly deleteClaims
  private queue: PendingInsert[] = []
  /** One transaction over a batch of inserts; made once (better-sqlite3 builds four wrappers per transaction()). */
  private readonly insertBatch

  constructor(
    private readonly db: Database.Database,
    private readonly clock: CatalogueClock,
  ) {
    // safeIntegers: int64 columns come back as bigint, so nothing above 2^53 is rounded.
    this.insert = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id')
    this.insert.safeIntegers(true)
    this.byId = db.prepare<[Int64], PetRow>('SELECT id, name, category_id, status FROM pets WHERE id = ?')
    this.byId.safeIntegers(true)
    this.page = db.prepare<[Int64, number], PetRow>('SELECT id, name, category_id, status FROM pets WHERE id > ? ORDER BY id LIMIT ?')
    this.page.safeIntegers(true)
    this.pageByStatus = db.prepare<[PetStatus, Int64, number], PetRow>(
      'SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?',
    )
    this.pageByStatus.safeIntegers(true)
    this.insertBatch = db.transaction((batch: PendingInsert[]) => batch.map((p) => this.insertOne(p)))
    this.findClaim = db.prepare<[string, string], { fingerprint: string; pet_id: bigint; order_id: bigint | null }>(
      'SELECT fingerprint, pet_id, order_id FROM idempotency_keys WHERE key_id = ? AND idem_key = ?',
    )
    this.findClaim.safeIntegers(true)
    this.insertClaim = db.prepare('INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, pet_id, created_at) VALUES (?, ?, ?, ?, ?)')
    this.deleteClaims = db.prepare<[number, number]>(
      `DELETE FROM idempotency_keys WHERE (key_id, idem_key) IN
         (SELECT key_id, idem_key FROM idempotency_keys WHERE created_at < ? LIMIT ?)`,
    )
  }

  /** SQLite has one writer at a time, so ids are assigned in commit order (see CatalogueClock). */
  catalogueVersion(): number {
    return this.clock.commits()
  }

  changeVersion(): number {
    return this.clock.changes()
  }

  /**
   * Group commit: inserts that arrive in the same event-loop turn share one transaction, so one
   * WAL commit (and, with power durability, one fsync) covers them all. Each promise resolves
   * only after that commit.
   */
  async createPet(pet: NewPet, recorded?: PetRecording): Promise<Pet> {
    return ((await this.enqueue(pet, undefined, recorded)) as { pet: Pet }).pet
  }

  /** In the same group commit: the record and the pet it creates are in one transaction. */
  createPetOnce(pet: NewPet, claim: IdempotencyClaim, recorded?: PetRecording): Promise<IdempotentCreate> {
    return this.enqueue(pet, claim, recorded)
  }

  async deleteIdempotencyRecords(before: number): Promise<number> {
    let total = 0
    for (;;) {
      const { changes } = this.deleteClaims.run(before, DELETE_BATCH)
      total += changes
      if (changes < DELETE_BATCH) return total
      // Let queued inserts and reads in between batches.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  private enqueue(pet: NewPet, claim: IdempotencyClaim | undefined, recorded: PetRecording | undefined): Promise<IdempotentCreate> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush())
      this.queue.push({ pet, claim, recorded, resolve, reject })
    })
  }

  private flush(): void {
    const batch = this.queue
    this.queue = []
    let results: IdempotentCreate[]
    try {
      // IMMEDIATE: the claim lookup must not be a read that another process's commit can outdate.
      results = this.insertBatch.immediate(batch)
    } catch (error) {
      for (const p of batch) p.reject(error)
      return
    }
    this.clock.committed()
    for (const [i, p] of batch.entries()) p.resolve(results[i]!)
  }

  /** Never throws for one insert's reason: a throw here would roll back the whole batch. */
  private insertOne({ pet, claim, recorded }: PendingInsert): IdempotentCreate {
    if (claim !== undefined) {
      const earlier = this.findClaim.get(claim.scope, claim.key)
      if (earlier !== undefined) {
        // A record of an order (POST /v1/store/orders under the same key) is another request.
        if (earlier.fingerprint !== claim.fingerprint || earlier.order_id !== null) return { outcome: 'reused' }
        const row = this.byId.get(earlier.pet_id)
        return row === undefined ? { outcome: 'pet_missing', petId: toInt64(earlier.pet_id) } : { outcome: 'replayed', pet: toPet(row) }
      }
    }
    const row = this.insert.get(pet.name, pet.categoryId, pet.status ?? null) as { id: bigint }
    const created: Pet = { id: Number(row.id), name: pet.name, categoryId: pet.categoryId }
    if (pet.status !== undefined) created.status = pet.status
    if (claim !== undefined) this.insertClaim.run(claim.scope, claim.key, claim.fingerprint, row.id, claim.createdAt)
    if (recorded !== undefined) writeChange(this.db, recorded(created))
    return { outcome: 'created', pet: created }
  }

  async listPets({ limit, status, afterId = 0 }: ListPetsOptions): Promise<readonly Pet[]> {
    return (status === undefined ? this.page.all(afterId, limit) : this.pageByStatus.all(status, afterId, limit)).map(toPet)
  }

  async getPet(id: Int64): Promise<Pet | undefined> {
    const row = this.byId.get(id)
    return row === undefined ? undefined : toPet(row)
  }
}
