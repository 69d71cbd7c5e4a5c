import { Ajv, type ErrorObject, type SchemaObject } from 'ajv'
import type { FastifyServerOptions } from 'fastify'
import { INT64_MAX, INT64_MIN, toInt64 } from '../int64.js'

/**
 * Strict validation, replacing Fastify's default Ajv setup (which coerces "5" to 5 and silently
 * strips unknown fields).
 *
 * - Bodies: no coercion, unknown fields rejected. int64 fields go through the `int64` keyword,
 *   because Ajv's own `integer` type cannot accept the bigint the JSON parser produces above 2^53.
 * - Query strings and path parameters arrive as strings: integers go through the
 *   `integerString` keyword, which accepts only plain decimal digits (no "1e3", " 5", "0x10", "5.0"),
 *   checks the range exactly (in bigint) and converts the value in place.
 * Each route schema is transformed for the validator only; the OpenAPI document and the
 * serializer keep the plain `type: integer, format: int64` form.
 */

type HttpPart = 'body' | 'querystring' | 'params' | 'headers'

interface IntRange {
  min?: string
  max?: string
  int64?: boolean
}

const DECIMAL = /^-?\d{1,20}$/


function rangeOf(range: IntRange): { min: bigint; max: bigint } {
  return {
    min: range.min !== undefined ? BigInt(range.min) : INT64_MIN,
    max: range.max !== undefined ? BigInt(range.max) : INT64_MAX,
  }
}

function rangeMessage(range: IntRange): string {
  const { min, max } = rangeOf(range)
  if (range.int64 && range.min === undefined && range.max === undefined) return 'must be an int64 integer (-2^63 to 2^63-1)'
  return `must be an integer from ${min} to ${max}`
}

function transform(schema: unknown, part: HttpPart): unknown {
  if (Array.isArray(schema)) return schema.map((s) => transform(s, part))
  if (schema === null || typeof schema !== 'object') return schema
  const s = schema as Record<string, unknown>
  if (s.type === 'integer' && (part !== 'body' || s.format === 'int64')) {
    const { type: _t, format, minimum, maximum, ...rest } = s
    const range: IntRange = { int64: format === 'int64' }
    if (minimum !== undefined) range.min = String(minimum)
    if (maximum !== undefined) range.max = String(maximum)
    return { ...rest, [part === 'body' ? 'int64' : 'integerString']: range }
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s)) out[k] = k === 'enum' || k === 'const' ? v : transform(v, part)
  return out
}

function addKeywords(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'int64',
    schemaType: 'object',
    errors: true,
    validate: function int64(range: IntRange, data: unknown): boolean {
      const self = int64 as unknown as { errors: Partial<ErrorObject>[] }
      let v: bigint
      if (typeof data === 'bigint') v = data
      else if (typeof data === 'number' && Number.isSafeInteger(data)) v = BigInt(data)
      else {
        self.errors = [{ keyword: 'int64', message: rangeMessage(range), params: {} }]
        return false
      }
      const { min, max } = rangeOf(range)
      if (v < min || v > max) {
        self.errors = [{ keyword: 'int64', message: rangeMessage(range), params: {} }]
        return false
      }
      return true
    },
  })
  ajv.addKeyword({
    keyword: 'integerString',
    schemaType: 'object',
    modifying: true,
    errors: true,
    validate: function integerString(range: IntRange, data: unknown, _parent, cxt): boolean {
      const self = integerString as unknown as { errors: Partial<ErrorObject>[] }
      const fail = (message: string) => {
        self.errors = [{ keyword: 'integerString', message, params: {} }]
        return false
      }
      if (typeof data === 'number') return true // a default the schema itself supplied
      if (Array.isArray(data)) return fail('must be given once')
      if (typeof data !== 'string' || !DECIMAL.test(data)) return fail(rangeMessage(range))
      const v = BigInt(data)
      const { min, max } = rangeOf(range)
      if (v < min || v > max) return fail(rangeMessage(range))
      if (cxt?.parentData !== undefined && cxt.parentDataProperty !== undefined) {
        ;(cxt.parentData as Record<string | number, unknown>)[cxt.parentDataProperty] = toInt64(v)
      }
      return true
    },
  })
}

function makeAjv(): Ajv {
  const ajv = new Ajv({
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
    code: { esm: true },
  })
  addKeywords(ajv)
  return ajv
}

/** Fastify's schemaController hook: one strict Ajv per build, shared schemas added once. */
export const strictSchemaController = {
  compilersFactory: {
    buildValidator: (externalSchemas: unknown) => {
      const ajv = makeAjv()
      for (const schema of Object.values((externalSchemas ?? {}) as Record<string, SchemaObject>)) {
        ajv.addSchema(transform(schema, 'body') as SchemaObject)
      }
      return ({ schema, httpPart }: { schema: unknown; httpPart?: string }) => {
        const part = (httpPart ?? 'body') as HttpPart
        // Query strings repeat keys into arrays; every parameter here takes one value.
        return ajv.compile(transform(schema, part) as SchemaObject)
      }
    },
  },
} as unknown as NonNullable<FastifyServerOptions['schemaController']>

/** A validation failure as one sentence naming the field, e.g. "categoryId must be an int64 integer". */
export function describeValidationError(error: ErrorObject, part: string): string {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.')
  const where = part === 'body' ? 'body' : part === 'querystring' ? 'query parameter' : 'path parameter'
  switch (error.keyword) {
    case 'required':
      return `${where === 'body' ? '' : where + ' '}${joinPath(path, String(error.params.missingProperty))} is required`
    case 'additionalProperties': {
      const field = joinPath(path, String(error.params.additionalProperty))
      if (part === 'body' && field === 'id') return 'id is assigned by the service and must not be sent'
      return `unknown ${where === 'body' ? 'field' : where} '${field}'`
    }
    case 'enum':
      return `${label(path, part)} must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`
    case 'type':
      if (path === '' && part === 'body') return `body must be a JSON ${error.params.type}`
      return `${label(path, part)} must be a ${error.params.type === 'integer' ? 'integer' : error.params.type}`
    default:
      return `${label(path, part)} ${error.message ?? 'is invalid'}`
  }
}

function joinPath(path: string, field: string): string {
  return path ? `${path}.${field}` : field
}

function label(path: string, part: string): string {
  if (path === '') return part === 'body' ? 'body' : part
  return part === 'body' ? path : `${part === 'querystring' ? 'query parameter' : 'path parameter'} ${path}`
}
