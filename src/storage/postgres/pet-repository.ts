import type { RecordedChange } from '../../changes/audit-log.js'
import type { IdempotencyClaim } from '../../idempotency/claim.js'
import type { IdempotentCreate, ListPetsOptions, PetChanges, PetRecording, PetRepository } from '../../pets/repository.js'
import type { NewPet, Pet, PetStatus } from '../../pets/schemas.js'
import { INT64_MAX, INT64_MIN, type Int64 } from '../../shared/int64.js'
import { type PetRow, petIdOf, toPet } from '../pet-row.js'
import { type Db, int8Param } from './connection.js'
import { type InsertedTable, insertRowsWithChanges, insertWithChange, writeChange } from './write-change.js'

/**
 * A pet's columns under the names of Pet's fields and in Pet's order, so that the object pg
 * makes for a row is already the Pet (asPet): no second object per row on the list route.
 */
const PET_COLUMNS = 'id, name, category_id AS "categoryId", status'

/** A row read with PET_COLUMNS; its int8 values are already Int64 (parseInt8). */
interface PetShapedRow {
  id: Int64
  name: string
  categoryId: Int64
  status: PetStatus | null
}

/**
 * toPet (../pet-row.ts) for a row read with PET_COLUMNS, with the same outcome: the row itself
 * when its status is set, a Pet without `status` when it is null, and the same refusal of an id
 * beyond 2^53 (petIdOf).
 */
function asPet(row: PetShapedRow): Pet {
  const id = petIdOf(row.id)
  if (row.status === null) return { id, name: row.name, categoryId: row.categoryId }
  return row as Pet
}

/** The pet as the API will show it once created, with id 0 for the id the insert gives it (insertWithChange). */
const petWithIdZero = (pet: NewPet): Pet =>
  pet.status === undefined
    ? { id: 0, name: pet.name, categoryId: pet.categoryId }
    : { id: 0, name: pet.name, categoryId: pet.categoryId, status: pet.status }

const petWithId = (pet: NewPet, id: number): Pet =>
  pet.status === undefined
    ? { id, name: pet.name, categoryId: pet.categoryId }
    : { id, name: pet.name, categoryId: pet.categoryId, status: pet.status }

/** A create waiting for the end of its event-loop turn (createTogether). */
interface TurnCreate {
  pet: NewPet
  /** What it records, made of the pet with id 0. */
  change: RecordedChange
  recorded: PetRecording | undefined
  resolve(pet: Pet): void
  reject(error: unknown): void
}

const NO_RECORD: RecordedChange = { audit: [] }

const PETS_TABLE: InsertedTable = {
  name: 'pets',
  columns: [
    ['name', 'text'],
    ['category_id', 'bigint'],
    ['status', 'text'],
  ],
}

/** INSERT_PET's parameters, and a row of PETS_TABLE. */
const petValues = ({ pet }: { pet: NewPet }): unknown[] => [pet.name, int8Param(pet.categoryId), pet.status ?? null]
const changeOf = ({ change }: TurnCreate): RecordedChange => change

/** A failure of the rows' statement that one row may be the cause of: SQLSTATE class 22 (data) or 23 (integrity). */
function isRowsFault(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code)
}

/** Idempotency records deleted per statement: the sweep never holds many row locks at once. */
const DELETE_BATCH = 1000

const inInt64 = (v: Int64): boolean => typeof v === 'number' || (v >= INT64_MIN && v <= INT64_MAX)

const INSERT_PET = `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${PET_COLUMNS}`
const PAGE = `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`
const PET_BY_ID = `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1`
const PAGE_BY_STATUS = `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`

/** More pets than this written since a check's mark, and the check answers 0 (every pet): its cost stays bounded after a long time unasked. */
const CHANGES_READ = 1000

/**
 * The statement's own snapshot (pg_current_snapshot() is the one its subquery reads with), and the
 * lowest id among the pets whose last writer (migration 026) it sees and the mark `$1` did not:
 * committed since. Such a writer began after the mark (xid at or past its xmax, `$2`) or was
 * running at it (its xip, `$3`): two index ranges, small however long ago the oldest transaction
 * running at the mark began (`>= xmin` would read every pet written since). With no mark (the
 * first call), every comparison is NULL: no lowest id.
 */
const PET_CHANGES = `SELECT pg_current_snapshot()::text AS mark,
  (SELECT CASE WHEN count(*) > ${CHANGES_READ} THEN 0 ELSE min(id) END FROM (
     SELECT id FROM pets
      WHERE (changed_xid >= $2::xid8 OR changed_xid = ANY ($3::xid8[])) AND NOT pg_visible_in_snapshot(changed_xid, $1::pg_snapshot)
      LIMIT ${CHANGES_READ + 1}) AS changed) AS lowest`

/** A snapshot's text (`xmin:xmax:xip,…`) as PET_CHANGES' parameters. */
function changesParams(mark: string | undefined): (string | null)[] {
  if (mark === undefined) return [null, null, null]
  const [, xmax, xip = ''] = mark.split(':')
  return [mark, xmax ?? null, `{${xip}}`]
}

/** The page's rows as Pets, in place: pg's array, each row the Pet itself unless its status is null. */
function asPets(rows: PetShapedRow[]): Pet[] {
  const pets = rows as unknown as Pet[]
  for (let i = 0; i < rows.length; i++) pets[i] = asPet(rows[i]!)
  return pets
}

export class PostgresPetRepository implements PetRepository {
  /** The creates of this event-loop turn, in the order they came (createTogether). */
  private turn: TurnCreate[] = []

  constructor(private readonly db: Db) {}

  /**
   * One statement, with what `recorded` makes of the pet when it is an event about it
   * (insertWithChange: the event written from the insert's row), shared with the creates that
   * arrive in the same event-loop turn (createTogether); another record, one transaction.
   */
  async createPet(pet: NewPet, recorded?: PetRecording): Promise<Pet> {
    const change = recorded?.(petWithIdZero(pet)) ?? NO_RECORD
    if (change.audit.length > 0) return this.createInTransaction(pet, recorded!)
    return new Promise((resolve, reject) => {
      if (this.turn.length === 0) setImmediate(() => this.endTurn())
      this.turn.push({ pet, change, recorded, resolve, reject })
    })
  }

  /**
   * Group commit: the creates of one event-loop turn are one statement (insertRowsWithChanges), so
   * one round trip and one commit, however many; one alone is the one-row statement, cheaper for
   * PostgreSQL than the rows' form for one row. A statement refused for what one row holds (SQLSTATE
   * class 22, data exception, or 23, integrity: nothing the API's validation lets through today) is
   * tried again row by row, so that the others are not refused with it. Any other failure (the
   * database unreachable, say) is every create's answer, as it would have been each one's alone.
   */
  private endTurn(): void {
    const turn = this.turn
    this.turn = []
    // Whatever throws is every create's answer that has none yet (a settled promise ignores it).
    this.createTogether(turn).catch((error: unknown) => {
      for (const create of turn) create.reject(error)
    })
  }

  private async createTogether(turn: TurnCreate[]): Promise<void> {
    if (turn.length === 1) return this.createAlone(turn[0]!)
    const statement = insertRowsWithChanges(PETS_TABLE, turn.map(petValues), turn.map(changeOf))
    // One after the other, each alone: their ids in the order the creates came, as the statement gives them.
    if (statement === undefined) {
      for (const create of turn) await this.createAlone(create)
      return
    }
    let rows: { id: Int64; ord: Int64 }[]
    try {
      rows = await this.db.queryNamed(statement.sql, statement.params)
    } catch (error) {
      if (!isRowsFault(error)) for (const create of turn) create.reject(error)
      else for (const create of turn) await this.createAlone(create)
      return
    }
    const ids = new Map(rows.map(({ id, ord }) => [Number(ord), id]))
    for (const [i, create] of turn.entries()) {
      const id = ids.get(i + 1)
      try {
        // A plain Error, answered 500 and logged: the statement inserts every row or none.
        if (id === undefined) throw new Error(`the insert of ${turn.length} pets answered ${rows.length} rows`)
        create.resolve(petWithId(create.pet, petIdOf(id)))
      } catch (error) {
        create.reject(error)
      }
    }
  }

  private async createAlone({ pet, change, recorded, resolve, reject }: TurnCreate): Promise<void> {
    try {
      const oneStatement = insertWithChange(INSERT_PET, petValues({ pet }), change)
      if (oneStatement === undefined) resolve(await this.createInTransaction(pet, recorded!))
      else resolve(asPet((await this.db.queryNamed<PetShapedRow>(oneStatement.sql, oneStatement.params))[0]!))
    } catch (error) {
      reject(error)
    }
  }

  private createInTransaction(pet: NewPet, recorded: PetRecording): Promise<Pet> {
    return this.db.transaction(async (client) => {
      const created = asPet((await client.query<PetShapedRow>(INSERT_PET, petValues({ pet }))).rows[0]!)
      await writeChange(client, recorded(created))
      return created
    })
  }

  /**
   * One transaction: a transaction-scoped advisory lock on (scope, Idempotency-Key) tells that
   * another instance is creating under the same key right now (in_flight, without waiting); under
   * the lock, the key's record either exists (replay or reuse) or is written with the new pet.
   * The lock goes with the transaction: a crashed instance leaves nothing behind that blocks a retry.
   */
  async createPetOnce(pet: NewPet, claim: IdempotencyClaim, recorded?: PetRecording): Promise<IdempotentCreate> {
    return this.db.transaction(async (client) => {
      const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok', [
        `idempotency:${claim.scope}:${claim.key}`,
      ])
      if (!lock.rows[0]!.ok) return { outcome: 'in_flight' }
      // LEFT JOIN: a record whose pet is not there is still a record (never a second pet).
      const earlier = await client.query<
        { fingerprint: string; pet_id: Int64; order_id: Int64 | null; id: Int64 | null } & Omit<PetRow, 'id'>
      >(
        `SELECT i.fingerprint, i.pet_id, i.order_id, p.id, p.name, p.category_id, p.status
           FROM idempotency_keys i LEFT JOIN pets p ON p.id = i.pet_id
          WHERE i.key_id = $1 AND i.idem_key = $2`,
        [claim.scope, claim.key],
      )
      const found = earlier.rows[0]
      if (found !== undefined) {
        // A record of an order (POST /v1/store/orders under the same key) is another request.
        if (found.fingerprint !== claim.fingerprint || found.order_id !== null) return { outcome: 'reused' }
        return found.id === null
          ? { outcome: 'pet_missing', petId: found.pet_id }
          : { outcome: 'replayed', pet: toPet({ ...found, id: found.id }) }
      }
      const inserted = await client.query<PetShapedRow>(INSERT_PET, [pet.name, int8Param(pet.categoryId), pet.status ?? null])
      const created = asPet(inserted.rows[0]!)
      await client.query('INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, pet_id, created_at) VALUES ($1, $2, $3, $4, $5)', [
        claim.scope,
        claim.key,
        claim.fingerprint,
        created.id,
        claim.createdAt,
      ])
      if (recorded !== undefined) await writeChange(client, recorded(created))
      return { outcome: 'created', pet: created }
    })
  }

  async deleteIdempotencyRecords(before: number): Promise<number> {
    let total = 0
    for (;;) {
      const rows = await this.db.query<{ n: number }>(
        `WITH gone AS (
           DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
             SELECT ctid FROM idempotency_keys WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED))
           RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [before, DELETE_BATCH],
      )
      const deleted = rows[0]!.n
      total += deleted
      if (deleted < DELETE_BATCH) return total
    }
  }

  /** Keyset paging: an index range scan from `afterId`, never OFFSET, so deep pages cost the same. */
  listPets({ limit, status, afterId = 0 }: ListPetsOptions): Promise<readonly Pet[]> {
    // Beyond int8 either way would be a 22003 error; ids are positive, so below the range means from the start.
    if (!inInt64(afterId)) {
      if (afterId > 0) return Promise.resolve([])
      afterId = 0
    }
    const rows =
      status === undefined
        ? this.db.queryNamed<PetShapedRow>(PAGE, [int8Param(afterId), limit])
        : // Unnamed: a generic plan would read the primary key and filter by status, however rare the status.
          this.db.query<PetShapedRow>(PAGE_BY_STATUS, [status, int8Param(afterId), limit])
    return rows.then(asPets)
  }

  /** Unnamed (not queryNamed): a generic plan, blind to how few pets the two ranges hold, could read them all. */
  async petChangesSince(mark: string | undefined): Promise<PetChanges> {
    const [row] = await this.db.query<{ mark: string; lowest: Int64 | null }>(PET_CHANGES, changesParams(mark))
    return { mark: row!.mark, lowestId: row!.lowest ?? undefined }
  }

  async getPet(id: Int64): Promise<Pet | undefined> {
    // Out of int8 range would be a 22003 error (a 500); no such row can exist.
    if (!inInt64(id)) return undefined
    const [row] = await this.db.queryNamed<PetShapedRow>(PET_BY_ID, [int8Param(id)])
    return row === undefined ? undefined : asPet(row)
  }
}
