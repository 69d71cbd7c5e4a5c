import { type Static, type TSchema, Type } from 'typebox'
import type { Int64 } from '../../shared/int64.js'

/** What the operations share of their TypeBox schemas; the resources' shapes are their features' (pets/, orders/). */

/** A reference to a shared schema (a component in the OpenAPI document), typed as the schema. */
export const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>({ $ref: `${String((schema as { $id?: string }).$id)}#` })

/** Validated by the int64 keyword (see http/validation.ts): Ajv's own integer type cannot see bigint. */
export const int64 = (description: string, extra: Record<string, unknown> = {}) =>
  Type.Unsafe<Int64>({ type: 'integer', format: 'int64', description, ...extra })

/** The page sizes of every list (never clamped: out of range is 400). */
export const LIST_LIMIT = { min: 1, max: 100, default: 20 } as const
