import type { Pet, PetStatus } from '../pets/schemas.js'
import { type Int64, toInt64 } from '../shared/int64.js'

/** A pets row as both SQL stores return it (same column names in both migrations). */
export interface PetRow {
  id: Int64
  name: string
  category_id: Int64
  status: PetStatus | null
}

/**
 * Pet.id is a number: an id would need 2^53 inserts to leave the safe range, but rounding one
 * silently would be far worse than failing loudly, so both stores refuse such a row the same way.
 */
export function petIdOf(id: Int64): number {
  const safe = typeof id === 'bigint' ? toInt64(id) : id
  if (typeof safe !== 'number') throw new Error(`pet id ${id} is beyond 2^53`)
  return safe
}

/** A pets row as the Pet it answers: `status` left out when null, the category id kept exact (Int64). */
export function toPet(row: PetRow): Pet {
  const id = petIdOf(row.id)
  const categoryId = typeof row.category_id === 'bigint' ? toInt64(row.category_id) : row.category_id
  const pet: Pet = { id, name: row.name, categoryId }
  if (row.status !== null) pet.status = row.status
  return pet
}
