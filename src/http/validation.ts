import { Ajv, type ErrorObject, type SchemaObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv'
import type { FastifyServerOptions, RouteOptions } from 'fastify'
import {
  CONTROL_CHARACTERS_REFUSED,
  findNul,
  NO_CONTROL_CHARACTERS,
  NUL_IN_FIELD_NAME_REFUSED,
  NUL_REFUSED,
} from '../shared/control-characters.js'
import { INT64_MAX, INT64_MIN, toInt64 } from '../shared/int64.js'
import { type DeferredCompilation, serializersOnFirstUse, validatorOnFirstUse } from './compile-on-first-use.js'
import { PLAIN_INTEGER } from './json-body.js'

/**
 * Strict validation, replacing Fastify's default Ajv setup (which coerces "5" to 5 and silently
 * strips unknown fields).
 *
 * - Bodies: no coercion, unknown fields rejected. int64 fields go through the `int64` keyword,
 *   because Ajv's own `integer` type cannot accept the bigint the JSON parser produces above 2^53.
 * - Query strings and path parameters arrive as strings: integers go through the
 *   `integerString` keyword, which checks the range exactly (in bigint) and converts in place.
 * - One rule for integers everywhere: plain decimal, no leading zeros, no sign but '-', no fraction
 *   or exponent, no "-0" ("007", "1e3", "5.0", " 5", "0x10", "-0" are refused in a query, a path and
 *   a body alike).
 * - Query strings are closed: an unknown parameter is 400 on every operation, also on one that
 *   declares no parameter (closeQueryStrings), and a parameter given twice is 400 whatever its type.
 * - No text of a body, query string or path holds U+0000 (NUL), in a value or a key, whatever its
 *   schema (refuseNul): PostgreSQL cannot take it, SQLite can; one answer on both, decided here for
 *   every route.
 * - Every problem of a request part is reported, each in plain words (describeValidationErrors).
 * Each route schema is transformed for the validator only; the OpenAPI document and the
 * serializer keep the plain `type: integer, format: int64` form.
 */

type HttpPart = 'body' | 'querystring' | 'params' | 'headers'

interface IntRange {
  min?: string
  max?: string
  int64?: boolean
}

function rangeOf(range: IntRange): { min: bigint; max: bigint } {
  return {
    min: range.min !== undefined ? BigInt(range.min) : INT64_MIN,
    max: range.max !== undefined ? BigInt(range.max) : INT64_MAX,
  }
}

function rangeMessage(range: IntRange): string {
  const { min, max } = rangeOf(range)
  const plain = 'written in plain decimal'
  if (range.int64 && range.min === undefined && range.max === undefined) return `must be an int64 integer (-2^63 to 2^63-1) ${plain}`
  return `must be an integer from ${min} to ${max} ${plain}`
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

/** The int64 keyword (bodies): a safe-integer number or a bigint within the range. */
const int64: SchemaValidateFunction = (range: IntRange, data: unknown): boolean => {
  const v = typeof data === 'bigint' ? data : typeof data === 'number' && Number.isSafeInteger(data) ? BigInt(data) : undefined
  const { min, max } = rangeOf(range)
  if (v !== undefined && v >= min && v <= max) return true
  int64.errors = [{ keyword: 'int64', message: rangeMessage(range), params: {} }]
  return false
}

/** The integerString keyword (query and path): a plain decimal string within the range, converted in place. */
const integerString: SchemaValidateFunction = (range: IntRange, data: unknown, _parent, cxt): boolean => {
  const fail = (message: string) => {
    integerString.errors = [{ keyword: 'integerString', message, params: {} }]
    return false
  }
  if (typeof data === 'number') return true // a default the schema itself supplied
  if (typeof data !== 'string' || data.length > 20 || !PLAIN_INTEGER.test(data)) return fail(rangeMessage(range))
  const v = BigInt(data)
  const { min, max } = rangeOf(range)
  if (v < min || v > max) return fail(rangeMessage(range))
  if (cxt?.parentData !== undefined && cxt.parentDataProperty !== undefined) {
    ;(cxt.parentData as Record<string | number, unknown>)[cxt.parentDataProperty] = toInt64(v)
  }
  return true
}

function addKeywords(ajv: Ajv): void {
  ajv.addKeyword({ keyword: 'int64', schemaType: 'object', errors: true, validate: int64 })
  ajv.addKeyword({ keyword: 'integerString', schemaType: 'object', modifying: true, errors: true, validate: integerString })
}

function makeAjv(): Ajv {
  const ajv = new Ajv({
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true, // every problem in one answer
    strict: false,
    code: { esm: true },
  })
  addKeywords(ajv)
  return ajv
}

/**
 * Fastify's schemaController hook: one strict Ajv per build, shared schemas added once; each
 * validator and serializer compiled on its first use (http/compile-on-first-use.ts says why).
 */
export function strictSchemaController(deferred: DeferredCompilation): NonNullable<FastifyServerOptions['schemaController']> {
  // One Ajv for the whole app. Fastify asks for a validator compiler again in each plugin context
  // that adds shared schemas (45 times for the two listeners), each with every shared schema so
  // far: an Ajv each compiled the JSON Schema meta-schema and checked every shared schema against
  // it again, about 0.8 s of CPU per server start. A shared schema is added once, by its $id; one
  // $id given two different schemas is an error, as it would be in one Ajv.
  const ajv = makeAjv()
  const added = new Map<string, unknown>()
  return {
    compilersFactory: {
      buildValidator: (externalSchemas: unknown) => {
        for (const [id, schema] of Object.entries((externalSchemas ?? {}) as Record<string, SchemaObject>)) {
          const known = added.get(id)
          if (known === schema) continue
          if (known !== undefined) {
            if (JSON.stringify(known) === JSON.stringify(schema)) continue
            throw new Error(`two different shared schemas with the $id ${id}`)
          }
          ajv.addSchema(transform(schema, 'body') as SchemaObject)
          added.set(id, schema)
        }
        return ({ schema, httpPart }: { schema: unknown; httpPart?: string }) =>
          validatorOnFirstUse(deferred, () => compileValidator(ajv, schema, (httpPart ?? 'body') as HttpPart))
      },
      buildSerializer: serializersOnFirstUse(deferred),
    },
    // Fastify's type declares buildValidator's result as Ajv's compile(schema); at run time Fastify
    // calls it with the route definition ({ schema, httpPart, ... }), as written above.
  } as unknown as NonNullable<FastifyServerOptions['schemaController']>
}

function compileValidator(ajv: Ajv, schema: unknown, part: HttpPart): ValidateFunction {
  // Headers never hold a NUL: Node's HTTP parser refuses the request first (and the one stored, Idempotency-Key, is visible ASCII).
  if (part === 'headers') return ajv.compile(transform(schema, part) as SchemaObject)
  if (part !== 'querystring') return refuseNul(ajv.compile(transform(schema, part) as SchemaObject))
  const query = transform(schema, part) as SchemaObject & { properties?: object }
  return refuseNul(givenOnce(ajv.compile({ ...query, additionalProperties: false }), Object.keys(query.properties ?? {})))
}

/** The query string of an operation that declares no parameter: it accepts none. */
const NO_QUERY_PARAMETERS = { type: 'object', properties: {}, additionalProperties: false }

/**
 * An onRoute hook, added before any route: every operation (a route of an OpenAPI document, that
 * is, one whose schema is not hidden) validates its query string, so that an unknown parameter is
 * 400 there too when the operation declares none (`POST /v1/pets?dryRun=1` must not create an
 * animal). Hidden routes (health, the documents, the docs console) take what they are given.
 */
export function closeQueryStrings(route: RouteOptions): void {
  const schema = route.schema as (RouteOptions['schema'] & { hide?: boolean }) | undefined
  if (schema === undefined || schema.hide === true) return
  schema.querystring ??= NO_QUERY_PARAMETERS
}

/**
 * The query string parser turns a repeated parameter into an array, which each schema would
 * refuse in its own words ("must be a string", "must be an integer …"): here it is one sentence
 * for every parameter, in place of whatever else was said about it.
 */
function givenOnce(validate: ValidateFunction, names: readonly string[]): ValidateFunction {
  const check = ((data: unknown, cxt?: Parameters<ValidateFunction>[1]) => {
    const valid = validate(data, cxt)
    const query = (data ?? {}) as Record<string, unknown>
    const repeated = names.filter((name) => Array.isArray(query[name])).map((name) => `/${name}`)
    if (repeated.length === 0) {
      check.errors = validate.errors
      return valid
    }
    const once = repeated.map(
      (instancePath): ErrorObject => ({ keyword: 'givenOnce', instancePath, schemaPath: '', params: {}, message: 'must be given once' }),
    )
    const others = (validate.errors ?? []).filter(
      (e) => !repeated.some((path) => e.instancePath === path || e.instancePath.startsWith(`${path}/`)),
    )
    check.errors = [...once, ...others]
    return false
  }) as ValidateFunction
  // Fastify passes the parent object (so that keywords may convert values in place) only to a validator that has one.
  Object.assign(check, { schema: validate.schema, schemaEnv: validate.schemaEnv })
  return check
}

/**
 * The schema's verdict, and a problem for each string holding a NUL and each object with a key
 * holding one (after the schema's own problems: a key name is told it holds a control character,
 * as before). What the schema refuses as unknown is not reported again.
 */
function refuseNul(validate: ValidateFunction): ValidateFunction {
  const check = ((data: unknown, cxt?: Parameters<ValidateFunction>[1]) => {
    const valid = validate(data, cxt)
    check.errors = validate.errors
    const places = findNul(data)
    if (places.length === 0) return valid
    const unknown = (validate.errors ?? [])
      .filter((e) => e.keyword === 'additionalProperties')
      .map((e) => `${e.instancePath}${pointer([String(e.params.additionalProperty)])}`)
    const nul = places
      .map((p) => ({ at: pointer(p.path), p }))
      .filter(({ at }) => !unknown.some((u) => at === u || at.startsWith(`${u}/`)))
      .map(({ at, p }): ErrorObject => {
        const instancePath = p.inKey ? pointer(p.path.slice(0, -1)) : at
        return { keyword: p.inKey ? 'nulInKey' : 'nul', instancePath, schemaPath: '', params: {} }
      })
    if (nul.length === 0) return valid
    check.errors = [...(validate.errors ?? []), ...nul]
    return false
  }) as ValidateFunction
  // As in givenOnce: Fastify passes the parent object to a validator that has these.
  Object.assign(check, { schema: validate.schema, schemaEnv: validate.schemaEnv })
  return check
}

/** A JSON Pointer, as Ajv writes instancePath. */
const pointer = (path: ReadonlyArray<string | number>) => path.map((k) => `/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')

/**
 * Validation failures in plain words, each naming the field: "name is required; categoryId must be
 * an int64 integer". One sentence per field (the first problem Ajv found with it), joined with "; ".
 */
/** What Ajv reports of one problem (Fastify's FastifySchemaValidationError is the same shape). */
interface ValidationProblem {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

export function describeValidationErrors(errors: readonly ValidationProblem[], part: string): string {
  const byField = new Map<string, string>()
  for (const e of errors) {
    const field = `${e.instancePath}/${String(e.params.missingProperty ?? e.params.additionalProperty ?? '')}`
    if (!byField.has(field)) byField.set(field, describeValidationError(e, part))
  }
  const problems = [...byField.values()]
  return problems.length === 1 ? problems[0]! : `${problems.length} problems: ${problems.join('; ')}`
}

function describeValidationError(error: ValidationProblem, part: string): string {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.')
  const where = part === 'body' ? 'body' : part === 'querystring' ? 'query parameter' : 'path parameter'
  const field = label(path, part)
  switch (error.keyword) {
    case 'required':
      return `${where === 'body' ? '' : where + ' '}${joinPath(path, String(error.params.missingProperty))} is required`
    case 'additionalProperties': {
      const extra = joinPath(path, String(error.params.additionalProperty))
      if (part === 'body' && extra === 'id') return 'id is assigned by the service and must not be sent'
      return `unknown ${where === 'body' ? 'field' : where} '${extra}'`
    }
    case 'nul':
      return `${field} ${NUL_REFUSED}`
    case 'nulInKey':
      return `${field} ${NUL_IN_FIELD_NAME_REFUSED}`
    case 'enum':
      return `${field} must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`
    case 'type':
      if (path === '' && part === 'body') return `body must be a JSON ${error.params.type}`
      return `${field} must be ${/^[aeiou]/.test(String(error.params.type)) ? 'an' : 'a'} ${error.params.type}`
    case 'minLength':
      return error.params.limit === 1 ? `${field} must not be empty` : `${field} must be at least ${error.params.limit} characters long`
    case 'maxLength':
      return `${field} must be at most ${error.params.limit} characters long`
    case 'minItems':
      return error.params.limit === 1 ? `${field} must not be empty` : `${field} must have at least ${error.params.limit} items`
    case 'maxItems':
      return `${field} must have at most ${error.params.limit} items`
    case 'uniqueItems':
      return `${field} must not name the same value twice (items ${Math.min(Number(error.params.i), Number(error.params.j))} and ${Math.max(Number(error.params.i), Number(error.params.j))})`
    case 'pattern':
      if (error.params.pattern === NOT_BLANK) return `${field} must not be only white space`
      if (error.params.pattern === NO_CONTROL_CHARACTERS) return `${field} ${CONTROL_CHARACTERS_REFUSED}`
      return `${field} must match ${error.params.pattern}`
    default:
      return `${field} ${error.message ?? 'is invalid'}`
  }
}

/** The pattern of a text that must contain something other than white space. */
export const NOT_BLANK = '\\S'

function joinPath(path: string, field: string): string {
  return path ? `${path}.${field}` : field
}

function label(path: string, part: string): string {
  if (path === '') return part === 'body' ? 'body' : part
  return part === 'body' ? path : `${part === 'querystring' ? 'query parameter' : 'path parameter'} ${path}`
}
