import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { type Durability, sqliteFilename } from '../../config.js'
import type { AuditRepository } from '../../keys/administration.js'
import type { KeyRepository } from '../../keys/repository.js'
import type { IdempotencyClaim, IdempotentCreate, ListPetsOptions, PetRepository } from '../../pets/repository.js'
import type { NewPet, Pet, PetStatus } from '../../pets/schemas.js'
import type { Int64 } from '../../shared/int64.js'
import { type PetRow, toPet } from '../pet-row.js'
import type { Storage } from '../storage.js'
import { SqliteAdminTokenRepository } from './admin-token-repository.js'
import { SqliteAuditRepository } from './audit-repository.js'
import { SqliteKeyRepository } from './key-repository.js'
import { describeSqliteOpenFailure, prepareSqliteFile } from './sqlite-file.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
  const applied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?')
  const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
  for (const file of files) {
    // IMMEDIATE takes the write lock first, so two processes starting at once apply each file once.
    db.transaction(() => {
      if (applied.get(file)) return
      db.exec(readFileSync(MIGRATIONS_DIR + file, 'utf8'))
      record.run(file, Date.now())
    }).immediate()
  }
}

/** Bounds the page cache: at most this many pets held by each kind of page (full, tail). */
const PAGE_CACHE_PETS = 10_000
/** Pages asked for once, remembered (by key only) so that a second request admits the page to the cache. */
const PAGES_SEEN_ONCE = 1024

interface PendingInsert {
  pet: NewPet
  claim: IdempotencyClaim | undefined
  resolve: (created: IdempotentCreate) => void
  reject: (error: unknown) => void
}

/** Idempotency records deleted per transaction: the sweep never holds the write lock for long. */
const DELETE_BATCH = 1000

class SqlitePetRepository implements PetRepository {
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
  private readonly dataVersion
  /**
   * Page cache. Pets are immutable and SQLite assigns ids in commit order (one writer at a time),
   * so a page that came back full can never change: no later pet can get an id inside it. Only a
   * page that reached the end of the catalogue can grow; those are dropped whenever this or any
   * other connection (another worker process) commits, which `PRAGMA data_version` reveals.
   */
  private readonly fullPages = new Map<string, readonly Pet[]>()
  private readonly tailPages = new Map<string, readonly Pet[]>()
  private readonly cachedPets = new Map<Map<string, readonly Pet[]>, number>()
  /**
   * The cache's doorkeeper: a page is cached from its second request on. A page asked for once
   * (a client paging through the whole catalogue, a crawler) would otherwise be cached, outlive
   * a young-generation GC and be evicted soon after: old-generation garbage at every request,
   * which let the heap grow to several times its live size under a scan (bench growth section).
   */
  private readonly seenOnce = new Set<string>()
  private seenVersion = -1
  private localWrites = 0

  constructor(db: Database.Database) {
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
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck()
    this.insertBatch = db.transaction((batch: PendingInsert[]) => batch.map(({ pet, claim }) => this.insertOne(pet, claim)))
    this.findClaim = db.prepare<[string, string], { fingerprint: string; pet_id: bigint }>(
      'SELECT fingerprint, pet_id FROM idempotency_keys WHERE key_id = ? AND idem_key = ?',
    )
    this.findClaim.safeIntegers(true)
    this.insertClaim = db.prepare('INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, pet_id, created_at) VALUES (?, ?, ?, ?, ?)')
    this.deleteClaims = db.prepare<[number, number]>(
      `DELETE FROM idempotency_keys WHERE (key_id, idem_key) IN
         (SELECT key_id, idem_key FROM idempotency_keys WHERE created_at < ? LIMIT ?)`,
    )
  }

  /**
   * Group commit: inserts that arrive in the same event-loop turn share one transaction, so one
   * WAL commit (and, with power durability, one fsync) covers them all. Each promise resolves
   * only after that commit.
   */
  async createPet(pet: NewPet): Promise<Pet> {
    return ((await this.enqueue(pet, undefined)) as { pet: Pet }).pet
  }

  /** In the same group commit: the record and the pet it creates are in one transaction. */
  createPetOnce(pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.enqueue(pet, claim)
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

  private enqueue(pet: NewPet, claim: IdempotencyClaim | undefined): Promise<IdempotentCreate> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush())
      this.queue.push({ pet, claim, resolve, reject })
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
    this.localWrites++
    for (const [i, p] of batch.entries()) p.resolve(results[i]!)
  }

  private insertOne(pet: NewPet, claim: IdempotencyClaim | undefined): IdempotentCreate {
    if (claim !== undefined) {
      const earlier = this.findClaim.get(claim.keyId, claim.key)
      if (earlier !== undefined) {
        if (earlier.fingerprint !== claim.fingerprint) return { outcome: 'reused' }
        return { outcome: 'replayed', pet: toPet(this.byId.get(earlier.pet_id)!) }
      }
    }
    const row = this.insert.get(pet.name, pet.categoryId, pet.status ?? null) as { id: bigint }
    const created: Pet = { id: Number(row.id), name: pet.name, categoryId: pet.categoryId }
    if (pet.status !== undefined) created.status = pet.status
    if (claim !== undefined) this.insertClaim.run(claim.keyId, claim.key, claim.fingerprint, row.id, claim.createdAt)
    return { outcome: 'created', pet: created }
  }

  /** A cached page is frozen and shared with later callers (PetRepository.listPets). */
  async listPets({ limit, status, afterId = 0 }: ListPetsOptions): Promise<readonly Pet[]> {
    const key = `${limit}|${status ?? ''}|${afterId}`
    const full = this.fullPages.get(key)
    if (full !== undefined) return full
    const version = this.dataVersion.get()! + this.localWrites
    if (version !== this.seenVersion) {
      this.tailPages.clear()
      this.cachedPets.set(this.tailPages, 0)
      this.seenVersion = version
    }
    const tail = this.tailPages.get(key)
    if (tail !== undefined) return tail
    const rows = (status === undefined ? this.page.all(afterId, limit) : this.pageByStatus.all(status, afterId, limit)).map(toPet)
    if (!this.seenOnce.delete(key)) {
      if (this.seenOnce.size >= PAGES_SEEN_ONCE) this.seenOnce.delete(this.seenOnce.values().next().value!)
      this.seenOnce.add(key)
      return rows
    }
    const cache = rows.length === limit ? this.fullPages : this.tailPages
    // Bounded by pets held, not pages: 101-pet pages would otherwise cost tens of MB.
    let held = this.cachedPets.get(cache) ?? 0
    while (held + rows.length > PAGE_CACHE_PETS && cache.size > 0) {
      const oldest = cache.keys().next().value!
      held -= cache.get(oldest)!.length
      cache.delete(oldest)
    }
    const page = Object.freeze(rows)
    cache.set(key, page)
    this.cachedPets.set(cache, held + rows.length)
    return page
  }

  async getPet(id: Int64): Promise<Pet | undefined> {
    const row = this.byId.get(id)
    return row === undefined ? undefined : toPet(row)
  }
}

export interface SqliteOptions {
  databaseUrl: string
  durability: Durability
}

const OPEN_DEADLINE_MS = 5000

/**
 * Opens, configures and migrates the file. SQLITE_BUSY is retried until OPEN_DEADLINE_MS: SQLite
 * skips the busy handler where waiting could deadlock (two processes that open a new file at once
 * and both switch it to WAL or migrate it, e.g. two CLI commands, or the workers of `serve
 * --workers`), and answers BUSY at once; a second try a moment later finds the work done.
 */
function openMigrated(filename: string, durability: Durability): Database.Database {
  const started = performance.now()
  for (;;) {
    let db: Database.Database | undefined
    try {
      db = new Database(filename, { timeout: OPEN_DEADLINE_MS })
      // The first statements read the header and write: a file that is not a database, or that
      // cannot be written, fails here rather than on the first request.
      db.pragma('journal_mode = WAL')
      // NORMAL in WAL mode: a commit is in the WAL file before it returns, so it survives a crash of
      // the process; FULL adds an fsync per commit, so it also survives a power loss.
      db.pragma(`synchronous = ${durability === 'power' ? 'FULL' : 'NORMAL'}`)
      migrate(db)
      return db
    } catch (error) {
      if (db?.open) db.close()
      const busy = (error as { code?: string }).code?.startsWith('SQLITE_BUSY') === true
      if (busy && performance.now() - started < OPEN_DEADLINE_MS) {
        // A synchronous pause (the constructor is synchronous, and this runs only at start).
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 30)
        continue
      }
      throw describeSqliteOpenFailure(error, filename) ?? error
    }
  }
}

export class SqliteStorage implements Storage {
  readonly kind = 'sqlite'
  readonly pets: PetRepository
  readonly keys: KeyRepository
  readonly adminTokens: SqliteAdminTokenRepository
  readonly audit: AuditRepository
  private readonly db: Database.Database

  /** Throws UnusableFileError, with the cause, when the file cannot be created, opened, written or migrated. */
  constructor({ databaseUrl, durability }: SqliteOptions) {
    const name = sqliteFilename(databaseUrl)
    const filename = name === ':memory:' || name === '' ? name : prepareSqliteFile(name)
    this.db = openMigrated(filename, durability)
    this.pets = new SqlitePetRepository(this.db)
    this.keys = new SqliteKeyRepository(this.db)
    this.adminTokens = new SqliteAdminTokenRepository(this.db)
    this.audit = new SqliteAuditRepository(this.db)
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get()
  }

  /** For tests and the fault suite: SQLite's own consistency check. */
  integrityCheck(): string {
    return this.db.pragma('integrity_check', { simple: true }) as string
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close()
  }
}
