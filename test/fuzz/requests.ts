/**
 * Requests generated from an OpenAPI document: for each operation, its method and path template
 * with generated path parameters, a query string from its query parameters, its documented
 * headers and a JSON body from its request body schema — each part mostly valid (so handlers
 * and stores run), otherwise near misses at the schema's edges and plain garbage. Nothing here
 * names an operation: a new operation in a document is fuzzed without a change here.
 */
import fc from 'fast-check'
import { INT64_MAX, INT64_MIN } from '../../src/shared/int64.js'
import {
  type AbuseCase,
  bodyMutation,
  CONTENT_TYPES,
  caseCommon,
  contentType,
  FOREIGN_PATHS,
  INT_SEGMENTS,
  int64Literal,
  jsonKeyAmong,
  jsonNumberLiteral,
  jsonScalar,
  jsonStringLiteral,
  jsonText,
  METHODS_OTHER,
  PATH_ODDITIES,
  pct,
  percentEncodeAll,
  QUERY_VALUES,
  unicodeString,
} from './arbitraries.js'
import { HOSTILE_STRINGS, HOSTILE_TEXT, keyShapedText } from './hostile-text.js'
import type { ApiSurface, FuzzOperation, Parameter, Schema } from './surface.js'

/**
 * A path or query value standing for an id the server knows (one seen in a 201's Location),
 * resolved when the case is sent: `<known 3>` is the fourth such id, modulo how many there are.
 */
export const knownId = (n: number) => `<known ${n}>`
export const KNOWN_ID = /<known (\d+)>/g

const known = fc.nat({ max: 1000 }).map(knownId)

// ---------------------------------------------------------------------------------------------
// JSON values of a schema

const typeOf = (schema: Schema): string | undefined =>
  typeof schema.type === 'string' ? schema.type : schema.properties !== undefined ? 'object' : undefined

const isWellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed()

/** RFC 3339 times around now: times are strings in these documents, so a string may well be one. */
const dateTime = fc
  .record({
    at: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }),
    form: fc.constantFrom('iso', 'seconds', 'offset', 'lower', 'date-only', 'no-seconds', 'impossible'),
    impossible: fc.constantFrom(...HOSTILE_TEXT['impossible-date']),
  })
  .map(({ at, form, impossible }) => {
    if (form === 'impossible') return impossible
    const iso = at.toISOString()
    if (form === 'no-seconds') return iso.slice(0, 16) + 'Z'
    if (form === 'seconds') return iso.replace(/\.\d{3}Z$/, 'Z')
    if (form === 'offset') return iso.replace('Z', '+02:00')
    if (form === 'lower') return iso.toLowerCase()
    if (form === 'date-only') return iso.slice(0, 10)
    return iso
  })

function integerRange(schema: Schema): { min: bigint; max: bigint } {
  // Without bounds: int64 for format int64, else what a JSON number holds exactly.
  const wide = schema.format === 'int64'
  return {
    min: schema.minimum !== undefined ? BigInt(Math.ceil(schema.minimum)) : wide ? INT64_MIN : -(2n ** 53n - 1n),
    max: schema.maximum !== undefined ? BigInt(Math.floor(schema.maximum)) : wide ? INT64_MAX : 2n ** 53n - 1n,
  }
}

function validInteger(schema: Schema): fc.Arbitrary<bigint> {
  const { min, max } = integerRange(schema)
  const edges = [min, max, 0n, 1n, -1n, 2n ** 53n, 2n ** 53n + 1n].filter((v) => v >= min && v <= max)
  return fc.oneof({ arbitrary: fc.bigInt({ min, max }), weight: 4 }, { arbitrary: fc.constantFrom(...edges), weight: 1 })
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const min: number = schema.minLength ?? 0
  const max: number = Math.min(schema.maxLength ?? 200, 1000)
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u')
  const withinLength = (s: string) => [...s].length >= min && [...s].length <= max
  // An anchored pattern describes the whole string (an id, a text without control characters):
  // generate from it, within the schema's lengths too (a pattern with `*` matches the empty text).
  if (pattern !== undefined && String(schema.pattern).startsWith('^')) return fc.stringMatching(pattern).filter(withinLength)
  return fc
    .oneof(
      { arbitrary: unicodeString(max), weight: 4 },
      { arbitrary: fc.string({ unit: 'grapheme', maxLength: max }), weight: 1 },
      { arbitrary: dateTime, weight: 1 },
      { arbitrary: fc.uuid(), weight: 1 },
      { arbitrary: fc.constantFrom('a'.repeat(max), '😀'.repeat(max), 'é'.repeat(max), 'x', '"\\/'), weight: 1 },
      // Valid for the schema (a handler may still refuse them: a date that does not exist, a key name that reads backwards).
      { arbitrary: fc.constantFrom(...HOSTILE_STRINGS), weight: 1 },
    )
    .filter((s) => {
      // No NUL: every text of a request refuses it, whatever its schema says.
      return withinLength(s) && isWellFormed(s) && !s.includes('\u0000') && (pattern === undefined || pattern.test(s))
    })
}

/** JSON text of a value the schema accepts (its structure; handlers may still refuse it). */
export function validValueText(schema: Schema): fc.Arbitrary<string> {
  if (schema.const !== undefined) return fc.constant(JSON.stringify(schema.const))
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum.map((v: unknown) => JSON.stringify(v)))
  const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf
  if (branches !== undefined) return fc.oneof(...branches.map((b) => validValueText(b)))
  switch (typeOf(schema)) {
    case 'integer':
      return validInteger(schema).map(String)
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum }).map((d) => JSON.stringify(d))
    case 'boolean':
      return fc.constantFrom('true', 'false')
    case 'null':
      return fc.constant('null')
    case 'string':
      return validString(schema).map((s) => JSON.stringify(s))
    case 'array': {
      // Within the schema's bounds (minItems, maxItems, uniqueItems: a key's scopes), at most 3 items.
      const minLength = schema.minItems ?? 0
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 3, 3))
      const items = validValueText(schema.items ?? {})
      const array =
        schema.uniqueItems === true ? fc.uniqueArray(items, { minLength, maxLength }) : fc.array(items, { minLength, maxLength })
      return array.map((a) => `[${a.join(',')}]`)
    }
    case 'object':
      return schema.properties !== undefined ? validObjectEntries(schema).map((e) => renderObject(e)) : freeObjectText
    default:
      return jsonText
  }
}

/** A small JSON object of any keys, with values JSON keeps exactly. */
const freeObjectText = fc
  .uniqueArray(
    fc.tuple(
      unicodeString(12).filter((s) => isWellFormed(s) && !s.includes('\u0000')),
      fc.oneof(
        fc.integer().map(String),
        unicodeString(20)
          .filter((s) => isWellFormed(s) && !s.includes('\u0000'))
          .map((s) => JSON.stringify(s)),
        fc.constantFrom('true', 'false', 'null', '[]', '{}'),
      ),
    ),
    { maxLength: 4, selector: ([k]) => k },
  )
  .map((kv) => `{${kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`)

/** A valid object as [key, value text] entries: every required field, each optional one now and then. */
export function validObjectEntries(schema: Schema): fc.Arbitrary<Array<[string, string]>> {
  const required = new Set<string>(schema.required ?? [])
  const fields = Object.entries<Schema>(schema.properties ?? {}).map(([name, sub]) => {
    const field = validValueText(sub).map((v): [string, string] => [name, v])
    return required.has(name) ? field : fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: field, weight: 1 })
  })
  return fc.tuple(...fields).map((entries) => entries.filter((e): e is [string, string] => e !== null))
}

/** Object text from entries, in the given order (indexes into a shuffle) and spacing. */
export function renderObject(entries: Array<[string, string]>, order: readonly number[] = [], whitespace = ''): string {
  const sorted = entries
    .map((e, i) => ({ e, k: (order[i % Math.max(order.length, 1)] ?? 0) + i / 100 }))
    .sort((a, b) => a.k - b.k)
    .map((x) => x.e)
  const w = whitespace
  return `{${w}${sorted.map(([k, v]) => `${JSON.stringify(k)}${w}:${w}${v}`).join(`,${w}`)}${w}}`
}

/** Near misses of a schema: the values just outside it, or of the wrong kind. */
function nearMissText(schema: Schema): fc.Arbitrary<string> {
  const misses: string[] = ['null', '[]', '{}', '""', 'true']
  const arbitraries: Array<fc.Arbitrary<string>> = []
  if (Array.isArray(schema.enum)) {
    for (const v of schema.enum.filter((e: unknown) => typeof e === 'string') as string[])
      misses.push(JSON.stringify(v.toUpperCase()), JSON.stringify(v + ' '), `[${JSON.stringify(v)}]`)
    misses.push('"unknown"', '1')
  }
  const type = typeOf(schema)
  if (type === 'integer' || type === 'number') {
    const { min, max } = integerRange(schema)
    misses.push(String(min - 1n), String(max + 1n), `"${max}"`, '"5"', '1.0', '[1]')
    arbitraries.push(jsonNumberLiteral)
  }
  if (type === 'string') {
    const max: number = schema.maxLength ?? 200
    misses.push(JSON.stringify(' '), JSON.stringify('a'.repeat(max + 1)), JSON.stringify('😀'.repeat(max + 1)), '1')
    arbitraries.push(jsonStringLiteral)
  }
  if (type === 'object') misses.push('"x"', '1', `{"x":"${'x'.repeat(5000)}"}`, '{"n":9007199254740993}', '{"n":1.0}', '{"n":1e400}')
  return fc.oneof(fc.constantFrom(...misses), ...arbitraries)
}

/** JSON text for a field of this schema: valid more often than not, else a near miss or any JSON. */
export function valueText(schema: Schema): fc.Arbitrary<string> {
  const branches: Schema[] = schema.anyOf ?? schema.oneOf ?? [schema]
  return fc.oneof(
    { arbitrary: validValueText(schema), weight: 6 },
    // An int64 field may refer to something (an order's petId): an id the server handed out, so that it exists.
    { arbitrary: schema.format === 'int64' ? known : validValueText(schema), weight: 3 },
    { arbitrary: fc.oneof(...branches.map(nearMissText)), weight: 3 },
    { arbitrary: jsonScalar, weight: 1 },
    { arbitrary: jsonText, weight: 1 },
  )
}

/** Field names and the names a client may confuse them with. */
function nearNames(names: readonly string[]): string[] {
  const out = new Set<string>()
  for (const n of names) {
    out.add(n)
    out.add(n.toLowerCase())
    out.add(n.toUpperCase())
    out.add(n.charAt(0).toUpperCase() + n.slice(1))
    out.add(n + ' ')
    out.add(n.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()))
  }
  return [...out]
}

/** An object close to the schema's: each field valid, invalid, missing or duplicated, plus stray keys, in any order. */
export function objectLikeText(schema: Schema): fc.Arbitrary<string> {
  const props = Object.entries<Schema>(schema.properties ?? {})
  const required = new Set<string>(schema.required ?? [])
  const names = props.map(([n]) => n)
  return fc
    .record({
      fields: fc.tuple(...props.map(([name, sub]) => fc.option(valueText(sub), { freq: required.has(name) ? 8 : 2 }))),
      extra: fc.array(fc.tuple(jsonKeyAmong(nearNames(names)), jsonScalar), { maxLength: 2 }),
      duplicate: names.length === 0 ? fc.constant(null) : fc.option(fc.constantFrom(...names), { freq: 6 }),
      order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
      whitespace: fc.constantFrom('', ' ', '\n', '\t', '\r\n  '),
    })
    .map(({ fields, extra, duplicate, order, whitespace }) => {
      const entries: Array<[string, string]> = []
      fields.forEach((v, i) => {
        if (v !== null) entries.push([JSON.stringify(names[i]), v])
      })
      for (const e of extra) entries.push(e)
      if (duplicate !== null) {
        const original = entries.find(([k]) => k === JSON.stringify(duplicate))
        entries.push([JSON.stringify(duplicate), original?.[1] ?? '1'])
      }
      const sorted = entries
        .map((e, i) => ({ e, k: order[i % order.length]! + i / 100 }))
        .sort((a, b) => a.k - b.k)
        .map((x) => x.e)
      const w = whitespace
      return `{${w}${sorted.map(([k, v]) => `${k}${w}:${w}${v}`).join(`,${w}`)}${w}}`
    })
}

/** A valid body spoiled the ways parsers differ on: wrapped, doubled, commented, with prototype keys or a client-sent id. */
const spoiled = (valid: string): fc.Arbitrary<string> => {
  const inner = valid.slice(1, -1)
  const join = (a: string) => (inner === '' ? `{${a}}` : `{${a},${inner}}`)
  return fc.constantFrom(
    `[${valid}]`,
    `{${inner},}`,
    valid.replaceAll('"', "'"),
    `${valid}${valid}`,
    join('"__proto__":{"id":1}'),
    join('"constructor":{"prototype":{"x":1}}'),
    join('"id":5'),
    `{${inner}/*c*/}`,
    valid.replace(/:(-?\d+)/, ':NaN'),
    valid.replace(/:(-?\d+)/, ':Infinity'),
    valid.replace(/:(-?\d+)/, ':0x10'),
    valid.replace(/:(-?\d+)/, ':+1'),
  )
}

/** The request body text of an operation (undefined: it documents none). */
export function bodyText(schema: Schema | undefined): fc.Arbitrary<string> {
  const valid = schema === undefined ? fc.constant('{}') : validValueText(schema)
  const field = Object.keys(schema?.properties ?? {})[0] ?? 'a'
  return fc.oneof(
    { arbitrary: schema?.properties !== undefined ? objectLikeText(schema) : jsonText, weight: 8 },
    { arbitrary: valid, weight: 3 },
    { arbitrary: jsonText, weight: 3 },
    {
      arbitrary: fc.oneof(
        fc.constantFrom('', ' ', 'null', '[]', '{}', '"str"', '1', 'true'),
        valid.filter((v) => v.startsWith('{')).chain(spoiled),
      ),
      weight: 2,
    },
    {
      arbitrary: fc
        .record({ depth: fc.constantFrom(10, 100, 1000, 3000, 8000), shape: fc.constantFrom('array', 'object', 'in-field') })
        .map(({ depth, shape }) => {
          const arr = '['.repeat(depth) + ']'.repeat(depth)
          if (shape === 'array') return arr
          if (shape === 'object') return '{"a":'.repeat(Math.min(depth, 3000)) + '1' + '}'.repeat(Math.min(depth, 3000))
          return `{${JSON.stringify(field)}:${arr}}`
        }),
      weight: 1,
    },
    { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')), weight: 1 },
  )
}

// ---------------------------------------------------------------------------------------------
// Parameters

/** A path segment for a parameter of this schema (percent-encoded where needed). */
export function pathSegment(schema: Schema): fc.Arbitrary<string> {
  const unicode = unicodeString(12)
    .filter((s) => s.length > 0)
    .map(pct)
  if (typeOf(schema) === 'integer') {
    return fc.oneof(
      { arbitrary: fc.constantFrom(...INT_SEGMENTS), weight: 5 },
      { arbitrary: int64Literal, weight: 3 },
      { arbitrary: fc.bigInt({ min: 1n, max: 50n }).map(String), weight: 2 },
      { arbitrary: known, weight: 2 },
      { arbitrary: unicode, weight: 1 },
    )
  }
  const valid = validString(schema)
  return fc.oneof(
    { arbitrary: known, weight: 6 },
    { arbitrary: valid.map(pct), weight: 3 },
    {
      arbitrary: valid.chain((s) => fc.constantFrom(s.slice(0, -1), s + 'a', s.toUpperCase(), s.replace(/.$/, '!'), ` ${s}`)).map(pct),
      weight: 2,
    },
    { arbitrary: fc.constantFrom(...PATH_ODDITIES), weight: 2 },
    { arbitrary: unicode, weight: 1 },
  )
}

/** A path of the template, each {parameter} generated from its schema. */
export function pathOf(op: FuzzOperation): fc.Arbitrary<string> {
  const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
  const segments = names.map((name) => pathSegment(op.params.find((p) => p.in === 'path' && p.name === name)?.schema ?? {}))
  return fc.tuple(...segments).map((values) => {
    let i = 0
    return op.template.replace(/\{[^}]+\}/g, () => values[i++]!)
  })
}

/** A query value of this schema, unencoded. */
export function queryValue(schema: Schema): fc.Arbitrary<string> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum.map(String))
  if (typeOf(schema) === 'integer') {
    const { min, max } = integerRange(schema)
    // Mostly small values, near the ids and page sizes that exist.
    const small = max < min + 200n ? max : min + 200n
    return fc.oneof({ arbitrary: fc.bigInt({ min, max: small }), weight: 5 }, { arbitrary: validInteger(schema), weight: 2 }).map(String)
  }
  if (schema.pattern !== undefined) return fc.oneof({ arbitrary: known, weight: 2 }, { arbitrary: validString(schema), weight: 1 })
  return validString(schema)
}

/** The values a query parameter of the document may be confused with. */
function oddQueryValues(params: readonly Parameter[]): string[] {
  const enums = params.flatMap((p) => (Array.isArray(p.schema.enum) ? (p.schema.enum as unknown[]).map(String) : []))
  return [...QUERY_VALUES, ...enums.flatMap((v) => [v.toUpperCase(), v + ' ']), enums.slice(0, 2).join(',')].filter((v) => v !== '')
}

/** A query string for these parameters: plausible ones, odd names and values, repeated and oddly encoded ones. */
export function queryString(params: readonly Parameter[]): fc.Arbitrary<string> {
  const query = params.filter((p) => p.in === 'query')
  if (query.length === 0) return fc.constant('')
  const odd = oddQueryValues(query)
  const plausible = fc
    .record(
      Object.fromEntries(
        query.map((p) => [
          p.name,
          fc.oneof({ arbitrary: queryValue(p.schema), weight: 8 }, { arbitrary: fc.constantFrom(...odd), weight: 1 }),
        ]),
      ),
      { requiredKeys: query.filter((p) => p.required).map((p) => p.name) },
    )
    .map((q) => {
      const parts = Object.entries(q).map(([k, v]) => `${k}=${pct(v)}`)
      return parts.length === 0 ? '' : '?' + parts.join('&')
    })
  const names = [
    ...nearNames(query.map((p) => p.name)),
    ...query.map((p) => `${p.name}[]`),
    'page',
    'offset',
    '__proto__',
    'constructor',
    '',
    'a.b',
  ]
  const part = fc
    .record({
      name: fc.oneof(
        { arbitrary: fc.constantFrom(...names), weight: 5 },
        { arbitrary: unicodeString(8), weight: 1 },
        // A key pasted as a parameter's name: never echoed by the 400, never logged.
        { arbitrary: fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), keyShapedText), weight: 1 },
      ),
      value: fc.oneof(
        { arbitrary: fc.constantFrom('', ...odd), weight: 5 },
        { arbitrary: fc.constantFrom(...HOSTILE_STRINGS), weight: 1 },
        { arbitrary: jsonNumberLiteral, weight: 2 },
        { arbitrary: unicodeString(10), weight: 1 },
        { arbitrary: fc.integer({ min: 0, max: 300 }).map((n) => '9'.repeat(n)), weight: 1 },
      ),
      encoding: fc.constantFrom('component', 'component', 'all', 'raw-safe', 'no-equals'),
    })
    .map(({ name, value, encoding }) => {
      if (encoding === 'all') return `${percentEncodeAll(name)}=${percentEncodeAll(value)}`
      if (encoding === 'no-equals') return pct(name)
      if (encoding === 'raw-safe') return `${name.replace(/[^\x21-\x7e]|[#&]/gu, pct)}=${value.replace(/[^\x21-\x7e]|[#&]/gu, pct)}`
      return `${pct(name)}=${pct(value)}`
    })
  // A number-valued parameter for the fixed oddities (repeated, other separators, a fragment, encoded).
  const n = (query.find((p) => typeOf(p.schema) === 'integer') ?? query[0]!).name
  const fixed = [
    '?',
    '??',
    '?&',
    `?&&${n}=5`,
    `?${n}=5&${n}=5`,
    `?${n}=5&${n}=6`,
    `?${n}=5;x=y`,
    `?${n}=5#frag`,
    `?${n}=5?x=y`,
    `?${n}=%35`,
    `?${percentEncodeAll(n.charAt(0))}${n.slice(1)}=5`,
  ]
  return fc.oneof(
    { arbitrary: fc.constant(''), weight: 2 },
    { arbitrary: plausible, weight: 8 },
    { arbitrary: fc.array(part, { minLength: 1, maxLength: 4 }).map((parts) => '?' + parts.join('&')), weight: 8 },
    { arbitrary: fc.constantFrom(...fixed), weight: 2 },
  )
}

/** Header values no token rule accepts: empty, spaces, non-ASCII, too long, a broken or empty quoted string, sent twice. */
export const MALFORMED_TOKENS: string[][] = [
  [''],
  [' '],
  ['a b'],
  ['"open'],
  ['"a"b"'],
  ['""'],
  ['é'],
  ['a\tb'],
  ['"a\\x"'],
  ['x'.repeat(256)],
  [`"${'x'.repeat(256)}"`],
  ['fz-1', 'fz-1'],
  ['fz-1', 'fz-2'],
]

/**
 * Values of a documented request header (a token such as an Idempotency-Key): none, one from a
 * small pool (so that values repeat across requests), any visible ASCII, or malformed (empty,
 * spaces, non-ASCII, too long, an unterminated or empty quoted string, sent twice).
 */
export const headerTokens: fc.Arbitrary<string[]> = fc.oneof(
  { arbitrary: fc.constant<string[]>([]), weight: 4 },
  { arbitrary: fc.constantFrom('fz-1', 'fz-2', 'fz-3', '"fz-1"', '"fz-2"', '"fz\\"3"').map((v) => [v]), weight: 3 },
  { arbitrary: fc.oneof(fc.stringMatching(/^[\x21-\x7e]{1,40}$/), fc.uuid(), fc.constant('x'.repeat(255))).map((v) => [v]), weight: 1 },
  { arbitrary: fc.constantFrom(...MALFORMED_TOKENS), weight: 3 },
)

// ---------------------------------------------------------------------------------------------
// Whole requests

function operationCase(surface: ApiSurface, op: FuzzOperation): fc.Arbitrary<AbuseCase> {
  const ownQuery = op.params.some((p) => p.in === 'query')
  // An operation without query parameters gets the others' now and then (each unknown here: 400).
  const others = surface.operations.flatMap((o) => o.params.filter((p) => p.in === 'query'))
  const headerParams = op.params.filter((p) => p.in === 'header')
  return fc.record({
    ...caseCommon,
    target: fc.constant(op.id),
    method: op.method === 'GET' ? fc.constantFrom('GET', 'GET', 'GET', 'HEAD') : fc.constant(op.method),
    path: pathOf(op),
    query: ownQuery
      ? queryString(op.params)
      : fc.oneof({ arbitrary: fc.constant(''), weight: 5 }, { arbitrary: queryString(others), weight: 1 }),
    contentType: op.body !== undefined ? contentType : fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 5 }),
    body:
      op.body !== undefined
        ? fc.oneof(
            { arbitrary: fc.record({ text: bodyText(op.body), mutation: bodyMutation }), weight: 12 },
            { arbitrary: fc.constant(null), weight: 1 },
          )
        : fc.option(fc.record({ text: bodyText(undefined), mutation: bodyMutation }), { freq: 5 }),
    headers: fc
      .tuple(...headerParams.map((p) => headerTokens.map((values) => values.map((v): [string, string] => [p.name.toLowerCase(), v]))))
      .map((lists) => lists.flat()),
  })
}

/** Paths no operation of the document serves, derived from its templates: slashes, case, suffixes, encodings, dot segments. */
export function unknownPaths(surface: ApiSurface): string[] {
  const p = surface.prefix
  const out = new Set<string>([p, p + '/', ...FOREIGN_PATHS, `${p}/store/orders`, `${p}/%E0%A4%A`])
  for (const template of surface.templates) {
    const path = template.replace(/\{[^}]+\}/g, '1')
    const rest = path.slice(p.length)
    const last = path.slice(path.lastIndexOf('/') + 1)
    for (const variant of [
      path + '/',
      '/' + path,
      p + '/' + rest,
      path + '/x',
      path.toUpperCase(),
      path.slice(0, path.length - last.length) + last.charAt(0).toUpperCase() + last.slice(1),
      path + '.json',
      path.slice(0, path.lastIndexOf('/')) + '%2F' + last,
      path.slice(0, path.lastIndexOf('/')) + '\\' + last,
      `${path}/../${last}`,
      `${p}/.${rest}`,
      p.replace(/\d+/, (d) => String(Number(d) + 1)) + rest,
      '/x/..' + path,
      `${p}/openapi.json/..${rest}`,
      `/x%2F..${path.replaceAll('/', '%2F')}`,
    ])
      out.add(variant)
  }
  return [...out]
}

/** Every operation of the document, plus other methods on its paths and paths it does not have. */
export function abuseCaseFor(surface: ApiSurface): fc.Arbitrary<AbuseCase> {
  const methods = [...new Set([...METHODS_OTHER, ...surface.operations.map((op) => op.method)])]
  const anyPath = fc.oneof(...surface.operations.map(pathOf))
  const maybeBody = fc.option(fc.record({ text: bodyText(undefined), mutation: bodyMutation }), { freq: 5 })
  const allQuery = surface.operations.flatMap((o) => o.params.filter((p) => p.in === 'query'))
  const common = {
    ...caseCommon,
    query: queryString(allQuery),
    contentType,
    body: maybeBody,
    headers: fc.constant<Array<[string, string]>>([]),
  }
  return fc.oneof(
    ...surface.operations.map((op) => ({ weight: op.body !== undefined ? 5 : 3, arbitrary: operationCase(surface, op) })),
    {
      weight: 1,
      arbitrary: fc.record({ ...common, target: fc.constant('other-method'), method: fc.constantFrom(...methods), path: anyPath }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        ...common,
        target: fc.constant('unknown-path'),
        method: fc.constantFrom('GET', 'POST', 'HEAD', 'DELETE'),
        path: fc.oneof(
          fc.constantFrom(...unknownPaths(surface)),
          unicodeString(20)
            .filter((s) => s !== '')
            .map((s) => '/' + pct(s)),
          unicodeString(20)
            .filter((s) => s !== '')
            .map((s) => `${surface.prefix}/${pct(s)}`),
        ),
      }),
    },
  )
}

/** A path of the template whose parameters are valid: mostly ids the server handed out. */
export function validPathOf(op: FuzzOperation): fc.Arbitrary<string> {
  const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
  const segments = names.map((name) => {
    const schema = op.params.find((p) => p.in === 'path' && p.name === name)?.schema ?? {}
    const valid = typeOf(schema) === 'integer' ? validInteger(schema).map(String) : validString(schema).map(pct)
    return fc.oneof({ arbitrary: known, weight: 6 }, { arbitrary: valid, weight: 1 })
  })
  return fc.tuple(...segments).map((values) => {
    let i = 0
    return op.template.replace(/\{[^}]+\}/g, () => values[i++]!)
  })
}

/** Requests a careful client sends: schema-valid parameters and body as JSON, known ids, a valid credential, over plain HTTP. */
export function validCaseFor(surface: ApiSurface): fc.Arbitrary<AbuseCase> {
  return fc.oneof(
    ...surface.operations.map((op) => {
      const query = op.params.filter((p) => p.in === 'query')
      return {
        weight: op.method === 'GET' || op.body === undefined ? 1 : 3,
        arbitrary: fc.record({
          ...caseCommon,
          auth: fc.constant('valid' as const),
          extra: fc.constant<Array<[string, string]>>([]),
          transport: fc.constant('http' as const),
          defect: fc.constant('none' as const),
          advanceMs: fc.oneof({ arbitrary: fc.constant(0), weight: 20 }, { arbitrary: fc.constantFrom(1_000, 61_000), weight: 2 }),
          burst: fc.constant(1),
          target: fc.constant(op.id),
          method: fc.constant(op.method),
          path: validPathOf(op),
          query: fc
            .record(Object.fromEntries(query.map((p) => [p.name, queryValue(p.schema)])), {
              requiredKeys: query.filter((p) => p.required).map((p) => p.name),
            })
            .map((q) => {
              const parts = Object.entries(q).map(([k, v]) => `${k}=${pct(v)}`)
              return parts.length === 0 ? '' : '?' + parts.join('&')
            }),
          contentType: fc.constant(op.body !== undefined ? 'application/json' : null),
          body:
            op.body !== undefined
              ? validValueText(op.body).map((text) => ({ text, mutation: { kind: 'none' as const } }))
              : fc.constant(null),
          headers: fc
            .tuple(
              ...op.params
                .filter((p) => p.in === 'header')
                .map((p) =>
                  fc.option(
                    fc.uuid().map((v): [string, string] => [p.name.toLowerCase(), v]),
                    { freq: 2 },
                  ),
                ),
            )
            .map((hs) => hs.filter((h): h is [string, string] => h !== null)),
        }),
      }
    }),
  )
}

/** Cases for the deprecated operations only (the sunset property). */
export function deprecatedPaths(surface: ApiSurface): fc.Arbitrary<string> {
  const deprecated = surface.operations.filter((op) => op.deprecated)
  if (deprecated.length === 0) throw new Error(`the ${surface.name} document has no deprecated operation`)
  return fc.oneof(...deprecated.map(pathOf))
}
