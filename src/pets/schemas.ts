import { Type, type Static } from 'typebox'

/**
 * An int64 value. A JS number loses precision above 2^53, so such values travel as bigint from
 * the JSON parser through storage to the serializer; invariant: a number is always a safe integer.
 */
export type Int64 = number | bigint

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER)
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER)

/** The Int64 invariant: a number when it is a safe integer, the bigint otherwise. */
export const toInt64 = (v: bigint): Int64 => (v >= SAFE_MIN && v <= SAFE_MAX ? Number(v) : v)

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
const int64 = (description: string) =>
  Type.Unsafe<Int64>({ type: 'integer', format: 'int64', description })

const name = Type.String({ minLength: 1, maxLength: 200, description: "The animal's name (1 to 200 characters)." })
const status = Type.Unsafe<PetStatus>({ $ref: 'PetStatus' })

export const NewPetSchema = Type.Object(
  { name, categoryId: int64('Category identifier.'), status: Type.Optional(status) },
  { $id: 'NewPet', title: 'NewPet', additionalProperties: false },
)
export type NewPet = Static<typeof NewPetSchema> & { categoryId: Int64 }

export const PetSchema = Type.Object(
  {
    id: int64('Unique identifier assigned by the service on creation.'),
    name,
    categoryId: int64('Identifier of the category the animal belongs to.'),
    status: Type.Optional(status),
  },
  { $id: 'Pet', title: 'Pet', additionalProperties: false },
)
export interface Pet {
  id: number
  name: string
  categoryId: Int64
  status?: PetStatus
}

export const PetsSchema = Type.Array(Type.Unsafe<Pet>({ $ref: 'Pet' }), {
  $id: 'Pets',
  title: 'Pets',
  description: 'A JSON array of Animal objects, in ascending id order.',
})

export const LIST_LIMIT = { min: 1, max: 100, default: 20 } as const

export const ListPetsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: LIST_LIMIT.min,
        maximum: LIST_LIMIT.max,
        default: LIST_LIMIT.default,
        description: 'Maximum number of animals returned (1 to 100; never clamped: out of range is 400).',
      }),
    ),
    status: Type.Optional(status),
    after: Type.Optional(
      Type.Unsafe<Int64>({
        type: 'integer',
        format: 'int64',
        minimum: 0,
        description:
          'Addition to the spec: return animals with an id greater than this one. Clients follow the Link rel="next" header rather than building it.',
      }),
    ),
  },
  { additionalProperties: false },
)
export interface ListPetsQuery {
  limit: number
  status?: PetStatus
  after?: Int64
}

export const PetIdParams = Type.Object({
  petId: Type.Unsafe<Int64>({ type: 'integer', format: 'int64', description: 'The identifier of the animal.' }),
})
