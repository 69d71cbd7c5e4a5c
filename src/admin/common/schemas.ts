import { type Static, type TSchema, Type } from 'typebox'
import { CUSTOMER_ID_PATTERN } from '../../customers/customer-id.js'
import { PLAN_NAMES } from '../../shared/plans.js'

/**
 * What the admin API's resources (keys/, usage/, audit/) share of their TypeBox schemas: the
 * reference to a component, times, key ids, the plan, paging. Each shape of the API is a
 * schema (validation, serialization, the admin OpenAPI document and the handlers' types), beside
 * the operation that uses it. Times are RFC 3339 (ISO 8601) strings in UTC; request bodies and
 * query strings are strict (unknown fields are 400, nothing is coerced).
 */

/** A reference to a shared schema (a component of the admin OpenAPI document), typed as the schema. */
export const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>({ $ref: `${String((schema as { $id?: string }).$id)}#` })

export const time = (description: string) => Type.String({ format: 'date-time', description })
// anyOf rather than a type array: understood alike by OpenAPI 3.0-era tools and 3.1.
export const nullableTime = (description: string) =>
  Type.Unsafe<string | null>({ anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }], description })
export const nullableObject = (description: string) =>
  Type.Unsafe<Record<string, unknown> | null>({ anyOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }], description })

export const KEY_ID_PATTERN = '^key_[0-9A-Za-z]{16}$'
export const keyId = (description: string) => Type.String({ pattern: KEY_ID_PATTERN, description })

export const plan = Type.Unsafe<(typeof PLAN_NAMES)[number]>({
  type: 'string',
  enum: [...PLAN_NAMES],
  description: 'The plan.',
  example: 'pro',
})

export const ADMIN_LIST_LIMIT = { min: 1, max: 100, default: 20 } as const
export const pageLimit = Type.Integer({
  minimum: ADMIN_LIST_LIMIT.min,
  maximum: ADMIN_LIST_LIMIT.max,
  default: ADMIN_LIST_LIMIT.default,
  description: 'Page size (1 to 100, default 20; never clamped).',
})

export const KeyIdParams = Type.Object({ keyId: keyId('The key id (key_…).') })

export const customerId = (description: string) => Type.String({ pattern: CUSTOMER_ID_PATTERN, description })
