import { type Static, Type } from 'typebox'
import { NOT_BLANK } from '../http/validation.js'
import type { Int64 } from '../shared/int64.js'

/**
 * One TypeBox schema per shape: validation, serialization, the OpenAPI document and these types.
 * The examples (`example`) are what the docs console's "Try it out" fills in (else it makes values up from
 * the patterns: a name of ")").
 */

export const PET_STATUSES = ['available', 'pending', 'sold'] as const
export type PetStatus = (typeof PET_STATUSES)[number]

export const PetStatusSchema = Type.Unsafe<PetStatus>({
  $id: 'PetStatus',
  title: 'PetStatus',
  type: 'string',
  enum: [...PET_STATUSES],
  description: 'Availability status.',
})

/** Validated by the int64 keyword (see http/validation.ts): Ajv's own integer type cannot see bigint. */
const int64 = (description: string, extra: Record<string, unknown> = {}) =>
  Type.Unsafe<Int64>({ type: 'integer', format: 'int64', description, ...extra })

const name = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: NOT_BLANK,
  description: "The animal's name: 1 to 200 characters, not only white space; stored exactly as sent (not trimmed).",
  example: 'Rex',
})
const status = Type.Unsafe<PetStatus>({ $ref: 'PetStatus' })

export const NewPetSchema = Type.Object(
  { name, categoryId: int64('Category identifier.', { example: 7 }), status: Type.Optional(status) },
  { $id: 'NewPet', title: 'NewPet', additionalProperties: false },
)
export type NewPet = Static<typeof NewPetSchema>

export const PetSchema = Type.Object(
  {
    // Always a safe integer in practice; the stores refuse a row beyond 2^53 (storage/pet-row.ts).
    id: Type.Unsafe<number>({
      type: 'integer',
      format: 'int64',
      description: 'Unique identifier assigned by the service on creation.',
      example: 1,
    }),
    name,
    categoryId: int64('Identifier of the category the animal belongs to.', { example: 7 }),
    status: Type.Optional(status),
  },
  { $id: 'Pet', title: 'Pet', additionalProperties: false },
)
export type Pet = Static<typeof PetSchema>
