import type { ListPetsOptions, PetRepository } from '../../pets/repository.js'
import { INT64_MAX, INT64_MIN, type Int64 } from '../../int64.js'
import type { NewPet, Pet } from '../../pets/schemas.js'
import { toPet, type PetRow } from '../pet-row.js'
import { int8Param, type Db } from './connection.js'

const COLUMNS = 'id, name, category_id, status'

const inInt64 = (v: Int64): boolean => typeof v === 'number' || (v >= INT64_MIN && v <= INT64_MAX)

export class PostgresPetRepository implements PetRepository {
  constructor(private readonly db: Db) {}

  async createPet(pet: NewPet): Promise<Pet> {
    const [row] = await this.db.query<PetRow>(
      `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      [pet.name, int8Param(pet.categoryId), pet.status ?? null],
    )
    return toPet(row!)
  }

  /** Keyset paging: an index range scan from `afterId`, never OFFSET, so deep pages cost the same. */
  async listPets({ limit, status, afterId = 0 }: ListPetsOptions): Promise<Pet[]> {
    // Beyond int8 either way would be a 22003 error; ids are positive, so below the range means from the start.
    if (!inInt64(afterId)) {
      if (afterId > 0) return []
      afterId = 0
    }
    const rows =
      status === undefined
        ? await this.db.query<PetRow>(`SELECT ${COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`, [
            int8Param(afterId),
            limit,
          ])
        : await this.db.query<PetRow>(
            `SELECT ${COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
            [status, int8Param(afterId), limit],
          )
    return rows.map(toPet)
  }

  async getPet(id: Int64): Promise<Pet | undefined> {
    // Out of int8 range would be a 22003 error (a 500); no such row can exist.
    if (!inInt64(id)) return undefined
    const [row] = await this.db.query<PetRow>(`SELECT ${COLUMNS} FROM pets WHERE id = $1`, [int8Param(id)])
    return row === undefined ? undefined : toPet(row)
  }
}
