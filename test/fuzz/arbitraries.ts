/**
 * fast-check generators for the HTTP fuzzer. They produce symbolic, printable cases (auth choices
 * are names, resolved to real keys at run time) so a failure's counterexample reads well and
 * shrinks.
 */
import fc from 'fast-check'

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

// ---------------------------------------------------------------------------------------------
// Numbers and strings

/** Integer and number edge literals, as they would appear in JSON or a query string. */
export const EDGE_NUMBER_LITERALS = [
  '0',
  '1',
  '-1',
  '-0',
  '00',
  '007',
  '20',
  '100',
  '101',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '18446744073709551615',
  '18446744073709551616',
  '99999999999999999999',
  '123456789012345678901234567890',
  '1.0',
  '1.5',
  '-1.5',
  '1e3',
  '1E3',
  '1e+3',
  '1e400',
  '-1e400',
  '1e-400',
  '0.0000001',
  '9223372036854775807.0',
  '9.223372036854775807e18',
  '9.3e18',
  '4.5e15',
  '1' + '0'.repeat(400),
  '-' + '9'.repeat(30),
] as const

/** Strings that are not JSON numbers (valid or not in JSON text). */
export const NON_JSON_NUMBERS = ['NaN', 'Infinity', '-Infinity', '0x10', '+1', '.5', '5.', '--1', '1_000', '0b1', '1e', '-'] as const

export const int64Literal = fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map(String)
const wideIntLiteral = fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String)
const doubleLiteral = fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d))

export const jsonNumberLiteral: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...EDGE_NUMBER_LITERALS), weight: 4 },
  { arbitrary: int64Literal, weight: 3 },
  { arbitrary: wideIntLiteral, weight: 1 },
  { arbitrary: doubleLiteral, weight: 1 },
  { arbitrary: fc.integer().map(String), weight: 1 },
)

/** Any Unicode string (code points, including astral ones). */
export const unicodeString = (maxLength: number) => fc.string({ unit: 'binary', maxLength })

/** JSON string literals, including escapes that decode to lone surrogates or NUL. */
export const jsonStringLiteral: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: unicodeString(30).map((s) => JSON.stringify(s)), weight: 5 },
  {
    arbitrary: fc.constantFrom(
      '""',
      '" "',
      '"\\u0000"',
      '"\\ud800"',
      '"\\udfff"',
      '"\\udfff\\ud800"',
      '"a\\ud83d"',
      '"\\ud83d\\ude00"',
      '"\\n\\t\\r"',
      '"\\/"',
      '"\\x41"',
      '"\\u00"',
      '"\u0007"',
      '"tab\there"',
      '"\\"',
      `"${'a'.repeat(200)}"`,
      `"${'a'.repeat(201)}"`,
      `"${'😀'.repeat(200)}"`,
      `"${'😀'.repeat(201)}"`,
      `"${'é'.repeat(200)}"`,
      '"e\u0301"',
      '"\\uFEFF"',
      '"\u2028\u2029"',
    ),
    weight: 3,
  },
  { arbitrary: fc.integer({ min: 0, max: 20_000 }).map((n) => `"${'x'.repeat(n)}"`), weight: 1 },
)

// ---------------------------------------------------------------------------------------------
// JSON bodies, as text (so they can carry duplicate keys, bigints, __proto__ and friends)

export const KEY_NAMES = [
  'name',
  'categoryId',
  'status',
  'id',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  'Name',
  'name ',
  'categoryid',
  'category_id',
  'STATUS',
  '$ref',
  'valueOf',
  '__defineGetter__',
] as const

const jsonKey = fc.oneof(
  { arbitrary: fc.constantFrom(...KEY_NAMES).map((k) => JSON.stringify(k)), weight: 4 },
  { arbitrary: jsonStringLiteral, weight: 1 },
  { arbitrary: fc.constant('"__pro\\u0074o__"'), weight: 1 },
)

const jsonScalar = fc.oneof(jsonNumberLiteral, jsonStringLiteral, fc.constantFrom('true', 'false', 'null'))

export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, jsonScalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }).map((a) => `[${a.join(',')}]`),
  object: fc.array(fc.tuple(jsonKey, tie('value')), { maxLength: 6 }).map((kv) => `{${kv.map(([k, v]) => `${k}:${v}`).join(',')}}`),
})).value

/** An object close to NewPet: each field valid, invalid, missing or duplicated, plus stray keys. */
const fieldValue = {
  name: fc.oneof(
    {
      arbitrary: unicodeString(200)
        .filter((s) => s.length > 0)
        .map((s) => JSON.stringify(s)),
      weight: 4,
    },
    { arbitrary: jsonStringLiteral, weight: 2 },
    { arbitrary: jsonScalar, weight: 1 },
    { arbitrary: jsonText, weight: 1 },
  ),
  categoryId: fc.oneof(
    { arbitrary: int64Literal, weight: 3 },
    { arbitrary: jsonNumberLiteral, weight: 3 },
    { arbitrary: fc.constantFrom('"5"', 'null', 'true', '[1]', '{}', '"9223372036854775807"', '""'), weight: 1 },
    { arbitrary: jsonText, weight: 1 },
  ),
  status: fc.oneof(
    { arbitrary: fc.constantFrom('"available"', '"pending"', '"sold"'), weight: 4 },
    { arbitrary: fc.constantFrom('"AVAILABLE"', '""', 'null', '1', '"sold "', '["sold"]', '"unknown"'), weight: 2 },
    { arbitrary: jsonScalar, weight: 1 },
  ),
} as const

export const newPetLikeText: fc.Arbitrary<string> = fc
  .record({
    name: fc.option(fieldValue.name, { freq: 8 }),
    categoryId: fc.option(fieldValue.categoryId, { freq: 8 }),
    status: fc.option(fieldValue.status, { freq: 2 }),
    extra: fc.array(fc.tuple(jsonKey, jsonScalar), { maxLength: 2 }),
    duplicate: fc.option(fc.constantFrom('name', 'categoryId', 'status'), { freq: 6 }),
    order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    whitespace: fc.constantFrom('', ' ', '\n', '\t', '\r\n  '),
  })
  .map(({ name, categoryId, status, extra, duplicate, order, whitespace }) => {
    const entries: Array<[string, string]> = []
    if (name !== null) entries.push(['"name"', name])
    if (categoryId !== null) entries.push(['"categoryId"', categoryId])
    if (status !== null) entries.push(['"status"', status])
    for (const e of extra) entries.push(e)
    if (duplicate !== null) {
      const original = entries.find(([k]) => k === `"${duplicate}"`)
      entries.push([`"${duplicate}"`, original?.[1] ?? '1'])
    }
    const sorted = entries
      .map((e, i) => ({ e, k: order[i % order.length]! + i / 100 }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.e)
    return `{${whitespace}${sorted.map(([k, v]) => `${k}${whitespace}:${whitespace}${v}`).join(`,${whitespace}`)}${whitespace}}`
  })

/** A valid NewPet, with its JSON text (categoryId as a bigint literal). */
export interface ValidNewPet {
  name: string
  categoryId: bigint
  status?: 'available' | 'pending' | 'sold'
  text: string
}

export const validNewPet: fc.Arbitrary<ValidNewPet> = fc
  .record(
    {
      name: fc.oneof(
        { arbitrary: unicodeString(200), weight: 4 },
        // UTF-16 code units, so lone surrogates too (sent as \ud800 escapes by JSON.stringify).
        {
          arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)), maxLength: 200 }),
          weight: 1,
        },
        {
          arbitrary: fc
            .tuple(unicodeString(20), fc.integer({ min: 0xd800, max: 0xdfff }), unicodeString(20))
            .map(([a, u, b]) => a + String.fromCharCode(u) + b),
          weight: 1,
        },
        { arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }), weight: 1 },
        { arbitrary: fc.string({ maxLength: 200 }), weight: 1 },
        { arbitrary: fc.constantFrom('😀'.repeat(200), 'é'.repeat(200), 'a'.repeat(200), 'x', ' ', '\u0000', '"\\/'), weight: 1 },
      ),
      categoryId: fc.oneof(
        { arbitrary: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), weight: 4 },
        { arbitrary: fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n), weight: 1 },
      ),
      status: fc.constantFrom('available', 'pending', 'sold'),
      keyOrder: fc.constantFrom('name-first', 'category-first', 'status-first'),
    },
    { requiredKeys: ['name', 'categoryId', 'keyOrder'] },
  )
  // Valid names: 1 to 200 code points, not only white space (README, Validation).
  .filter((p) => [...p.name].length >= 1 && /\S/u.test(p.name))
  .map(({ name, categoryId, status, keyOrder }) => {
    const parts: Record<string, string> = { name: `"name":${JSON.stringify(name)}`, categoryId: `"categoryId":${categoryId}` }
    if (status !== undefined) parts.status = `"status":${JSON.stringify(status)}`
    const order =
      keyOrder === 'name-first'
        ? ['name', 'categoryId', 'status']
        : keyOrder === 'category-first'
          ? ['categoryId', 'status', 'name']
          : ['status', 'name', 'categoryId']
    const text = `{${order
      .filter((k) => parts[k] !== undefined)
      .map((k) => parts[k])
      .join(',')}}`
    return status === undefined ? { name, categoryId, text } : { name, categoryId, status, text }
  })

// ---------------------------------------------------------------------------------------------
// Bodies as bytes

const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0xc3],
  [0xf0, 0x9f, 0x98],
].map((b) => Buffer.from(b))

export type BodyMutation =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'invalid-utf8'; at: number; bytes: number }
  | { kind: 'bom' }
  | { kind: 'trailing'; text: string }
  | { kind: 'pad-to'; size: number }

export const bodyMutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'none' } as const), weight: 6 },
  { arbitrary: fc.nat().map((at) => ({ kind: 'truncate', at }) as const), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('invalid-utf8' as const), at: fc.nat(), bytes: fc.nat({ max: INVALID_UTF8.length - 1 }) }),
    weight: 2,
  },
  { arbitrary: fc.constant({ kind: 'bom' } as const), weight: 1 },
  {
    arbitrary: fc
      .constantFrom(' ', 'x', '}', ',', '{}', '\u0000', '//c', '/*c*/', '\n\n')
      .map((text) => ({ kind: 'trailing', text }) as const),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 20_000, 70_000).map((size) => ({ kind: 'pad-to', size }) as const),
    weight: 1,
  },
)

export function applyMutation(text: string, m: BodyMutation): Buffer {
  const buf = Buffer.from(text, 'utf8')
  switch (m.kind) {
    case 'none':
      return buf
    case 'truncate':
      return buf.subarray(0, buf.length === 0 ? 0 : m.at % buf.length)
    case 'invalid-utf8': {
      const at = buf.length === 0 ? 0 : m.at % buf.length
      return Buffer.concat([buf.subarray(0, at), INVALID_UTF8[m.bytes]!, buf.subarray(at)])
    }
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf])
    case 'trailing':
      return Buffer.concat([buf, Buffer.from(m.text, 'utf8')])
    case 'pad-to':
      // Leading whitespace keeps the JSON meaning while growing the body.
      return buf.length >= m.size ? buf : Buffer.concat([Buffer.alloc(m.size - buf.length, 0x20), buf])
  }
}

export const bodyText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: newPetLikeText, weight: 8 },
  { arbitrary: validNewPet.map((p) => p.text), weight: 3 },
  { arbitrary: jsonText, weight: 3 },
  {
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'null',
      '[]',
      '{}',
      '[{"name":"a","categoryId":1}]',
      '"str"',
      '1',
      'true',
      '{"name":"a","categoryId":1,}',
      "{'name':'a','categoryId':1}",
      '{"name":"a","categoryId":1}{"name":"b","categoryId":2}',
      '{"name":"a","categoryId":1,"__proto__":{"id":1}}',
      '{"__proto__":{"status":"sold"},"name":"a","categoryId":1}',
      '{"constructor":{"prototype":{"x":1}},"name":"a","categoryId":1}',
      '{"name":"a","categoryId":1,"id":5}',
      '{"name":"a","name":"b","categoryId":1}',
      '{"name":"a","categoryId":NaN}',
      '{"name":"a","categoryId":Infinity}',
      '{"name":"a","categoryId":0x10}',
      '{"name":"a","categoryId":+1}',
      '{"name":"a"/*c*/,"categoryId":1}',
    ),
    weight: 2,
  },
  {
    arbitrary: fc
      .record({ depth: fc.constantFrom(10, 100, 1000, 3000, 8000), shape: fc.constantFrom('array', 'object', 'in-name', 'in-category') })
      .map(({ depth, shape }) => {
        const arr = '['.repeat(depth) + ']'.repeat(depth)
        if (shape === 'array') return arr
        if (shape === 'object') return '{"a":'.repeat(Math.min(depth, 3000)) + '1' + '}'.repeat(Math.min(depth, 3000))
        if (shape === 'in-name') return `{"name":${arr},"categoryId":1}`
        return `{"name":"deep","categoryId":${arr}}`
      }),
    weight: 1,
  },
  { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')), weight: 1 },
)

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'application/json; charset="utf-8"',
  'application/json; charset=utf8',
  'APPLICATION/JSON',
  'Application/Json; Charset=UTF-8',
  'application/json ',
  ' application/json',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=ISO-8859-1',
  'application/json; charset=',
  'application/json; charset="',
  'application/json; foo=bar',
  'application/json; charset=utf-8; charset=latin1',
  'application/json;',
  'application/json,text/plain',
  'application/jsonx',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/problem+json',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '*/*',
  'application/*',
  'json',
  '',
  ';',
  'application/json\t',
] as const

// ---------------------------------------------------------------------------------------------
// Query strings, paths and headers

export const QUERY_NAMES = [
  'limit',
  'status',
  'after',
  'LIMIT',
  'Limit',
  'limt',
  'page',
  'offset',
  '__proto__',
  'constructor',
  'limit[]',
  'status[0]',
  '',
  'limit ',
  ' limit',
  'a.b',
] as const
export const QUERY_VALUES = [
  '',
  '0',
  '1',
  '5',
  '20',
  '100',
  '101',
  '-1',
  '1e1',
  '0x10',
  ' 5',
  '5 ',
  '+5',
  '5.0',
  '05',
  '1,2',
  'null',
  'undefined',
  'true',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '18446744073709551616',
  '99999999999999999999999',
  'available',
  'pending',
  'sold',
  'AVAILABLE',
  'sold ',
  'available,sold',
  'toString',
  '__proto__',
  '%',
  '%zz',
  '%C3%28',
  '%00',
  '%ff',
] as const

/** encodeURIComponent that never throws: lone surrogates become U+FFFD first. */
export const pct = (s: string) => encodeURIComponent((s as string & { toWellFormed(): string }).toWellFormed())

const percentEncodeAll = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0').toUpperCase()).join('')

const queryPart = fc
  .record({
    name: fc.oneof({ arbitrary: fc.constantFrom(...QUERY_NAMES), weight: 5 }, { arbitrary: unicodeString(8), weight: 1 }),
    value: fc.oneof(
      { arbitrary: fc.constantFrom(...QUERY_VALUES), weight: 5 },
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

/** Mostly valid list queries (so the handler, paging and the filter run), with an odd value now and then. */
const plausibleQuery: fc.Arbitrary<string> = fc
  .record(
    {
      limit: fc.oneof(
        { arbitrary: fc.integer({ min: 1, max: 100 }).map(String), weight: 8 },
        { arbitrary: fc.constantFrom(...QUERY_VALUES), weight: 1 },
      ),
      status: fc.oneof(
        { arbitrary: fc.constantFrom('available', 'pending', 'sold'), weight: 8 },
        { arbitrary: fc.constantFrom(...QUERY_VALUES), weight: 1 },
      ),
      after: fc.oneof(
        { arbitrary: fc.bigInt({ min: 0n, max: 200n }).map(String), weight: 5 },
        { arbitrary: fc.bigInt({ min: 0n, max: INT64_MAX }).map(String), weight: 2 },
        { arbitrary: fc.constantFrom(...QUERY_VALUES), weight: 1 },
      ),
    },
    { requiredKeys: [] },
  )
  .map((q) => {
    const parts = Object.entries(q).map(([k, v]) => `${k}=${pct(v)}`)
    return parts.length === 0 ? '' : '?' + parts.join('&')
  })

export const queryString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constant(''), weight: 2 },
  { arbitrary: plausibleQuery, weight: 8 },
  { arbitrary: fc.array(queryPart, { minLength: 1, maxLength: 4 }).map((parts) => '?' + parts.join('&')), weight: 8 },
  {
    arbitrary: fc.constantFrom(
      '?',
      '??',
      '?&',
      '?&&limit=5',
      '?limit=5&limit=5',
      '?limit=5&limit=6',
      '?limit=5;status=sold',
      '?limit=5#frag',
      '?limit=5?status=sold',
      '?status=sold&status=sold',
      '?after=1&after=2',
      '?limit=%35',
      '?%6cimit=5',
    ),
    weight: 2,
  },
)

export const PET_IDS = [
  '1',
  '2',
  '0',
  '-1',
  '-0',
  '00001',
  '9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '1e3',
  '1.0',
  '0x1',
  '+1',
  ' 1',
  '1 ',
  'abc',
  'null',
  '%20',
  '%2F',
  '%2f1',
  '%ZZ',
  '%',
  '%00',
  '%C3%28',
  '%E2%82%AC',
  '1%00',
  '..',
  '.',
  '%2E%2E',
  '1;x',
  '1,2',
  "'1'",
  '"1"',
  '%22',
  '{1}',
  '[1]',
  '9'.repeat(100),
  '9'.repeat(101),
  '9'.repeat(5000),
] as const

export const petIdSegment: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...PET_IDS), weight: 5 },
  { arbitrary: int64Literal, weight: 3 },
  { arbitrary: fc.bigInt({ min: 1n, max: 50n }).map(String), weight: 2 },
  {
    arbitrary: unicodeString(12)
      .filter((s) => s.length > 0)
      .map(pct),
    weight: 1,
  },
)

/** Not '/': it answers 200 with where the docs are (README, Operations). */
export const UNKNOWN_PATHS = [
  '/v1',
  '/v1/',
  '/v1/pets/',
  '/v1/pets//1',
  '//v1/pets',
  '/v1//pets',
  '/v1/pets/1/',
  '/v1/pets/1/x',
  '/v2/pets',
  '/V1/PETS',
  '/v1/Pets',
  '/v1/pets%2F1',
  '/v1/pets.json',
  '/v1/pets/../pets',
  '/v1/./pets',
  '/docs/../v1/pets',
  '/docs%2F..%2Fv1%2Fpets',
  '/healthz/../v1/pets',
  '/v1/openapi.json/../pets',
  '/metrics/../v1/pets',
  '/v1/pets\\1',
  '/store/orders',
  '/v1/store/orders',
  '/%',
  '/%ZZ',
  '/v1/%E0%A4%A',
  '/v1/pets/%',
  '/' + 'a'.repeat(3000),
  '*',
] as const

export type AuthChoice =
  | 'none'
  | 'empty'
  | 'valid'
  | 'valid-lower-scheme'
  | 'valid-upper-scheme'
  | 'valid-double-space'
  | 'valid-tab'
  | 'valid-trailing-space'
  | 'valid-leading-space'
  | 'valid-comma-suffix'
  | 'free'
  | 'revoked'
  | 'staging'
  | 'wrong-checksum'
  | 'truncated'
  | 'garbage-token'
  | 'basic'
  | 'token-scheme'
  | 'bearer-only'
  | 'bearer-space'
  | 'long-600'
  | 'long-9000'
  | 'non-ascii'
  | 'dup-valid-garbage'
  | 'dup-garbage-valid'

/** Choices that certainly present no valid key (a 2xx would be a bypass). */
export const UNAUTHENTICATED_CHOICES: ReadonlySet<AuthChoice> = new Set<AuthChoice>([
  'none',
  'empty',
  'revoked',
  'staging',
  'wrong-checksum',
  'truncated',
  'garbage-token',
  'basic',
  'token-scheme',
  'bearer-only',
  'bearer-space',
  'long-600',
  'long-9000',
  'non-ascii',
  'valid-tab',
  'valid-comma-suffix',
])

export const authChoice: fc.Arbitrary<AuthChoice> = fc.oneof(
  { arbitrary: fc.constant('valid' as const), weight: 10 },
  {
    arbitrary: fc.constantFrom<AuthChoice>(
      'none',
      'empty',
      'valid-lower-scheme',
      'valid-upper-scheme',
      'valid-double-space',
      'valid-tab',
      'valid-trailing-space',
      'valid-leading-space',
      'valid-comma-suffix',
      'free',
      'revoked',
      'staging',
      'wrong-checksum',
      'truncated',
      'garbage-token',
      'basic',
      'token-scheme',
      'bearer-only',
      'bearer-space',
      'long-600',
      'long-9000',
      'non-ascii',
      'dup-valid-garbage',
      'dup-garbage-valid',
    ),
    weight: 6,
  },
)

export type RequestIdChoice = { kind: 'none' } | { kind: 'one'; value: string } | { kind: 'two'; a: string; b: string } | { kind: 'bytes' }

const requestIdValue = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/),
  fc.constantFrom(
    '',
    ' ',
    'a b',
    '"x"',
    '<script>',
    'as_live_0123456789abcdefghijABCDEFGHIJ0123456789',
    'x-as_test_y',
    'a'.repeat(128),
    'a'.repeat(129),
    'id\u00e9',
    '../../etc/passwd',
    'x\tx',
    '{}',
    '%0d%0a',
  ),
  fc.string({ maxLength: 40 }),
)
export const requestIdChoice: fc.Arbitrary<RequestIdChoice> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'none' } as const), weight: 4 },
  { arbitrary: requestIdValue.map((value) => ({ kind: 'one', value }) as const), weight: 4 },
  { arbitrary: fc.tuple(requestIdValue, requestIdValue).map(([a, b]) => ({ kind: 'two', a, b }) as const), weight: 1 },
  { arbitrary: fc.constant({ kind: 'bytes' } as const), weight: 1 },
)

/** Headers beyond Authorization, Content-Type and X-Request-Id; values may be raw bytes (raw transport only). */
export const extraHeaders: fc.Arbitrary<Array<[string, string]>> = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom<[string, string]>(
        ['accept', 'application/json'],
        ['accept', 'text/html'],
        ['accept', '*/*;q=0'],
        ['accept-encoding', 'gzip, br'],
        ['accept-charset', 'latin1'],
        ['content-encoding', 'gzip'],
        ['content-language', 'fr'],
        ['expect', '100-continue'],
        ['connection', 'keep-alive'],
        ['x-forwarded-for', '1.2.3.4'],
        ['x-forwarded-for', 'garbage, , ::1'],
        ['forwarded', 'for=1.2.3.4'],
        ['x-real-ip', '10.0.0.1'],
        ['origin', 'https://evil.example'],
        ['cookie', 'a=b'],
        ['range', 'bytes=0-1'],
        ['if-none-match', '*'],
        ['x-http-method-override', 'DELETE'],
        ['user-agent', ''],
        ['accept-version', '2.0.0'],
        ['x-ratelimit-remaining', '999'],
        ['x-api-key', 'x'],
        ['te', 'trailers'],
      ),
    },
    { weight: 2, arbitrary: fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), fc.stringMatching(/^[\x20-\x7e]{0,60}$/)) },
    // Around and over the 8 KiB header limit (431).
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constant('x-big'),
        fc.integer({ min: 100, max: 10_000 }).map((n) => 'b'.repeat(n)),
      ),
    },
  ),
  { maxLength: 3 },
)

/** Defects that only a raw socket can send; each may make the request malformed. */
export type RawDefect =
  | 'none'
  | 'no-host'
  | 'dup-host'
  | 'http10'
  | 'http2-version'
  | 'lowercase-method'
  | 'cl-short'
  | 'cl-long-eof'
  | 'cl-garbage'
  | 'cl-negative'
  | 'cl-dup-conflict'
  | 'cl-dup-same'
  | 'cl-and-chunked'
  | 'chunked'
  | 'chunked-bad'
  | 'header-ctl-byte'
  | 'header-obs-fold'
  | 'header-space-before-colon'
  | 'header-utf8-value'
  | 'bare-lf'
  | 'absolute-form'
  | 'expect-unknown'
  | 'many-headers'
  | 'dup-content-type'

export const rawDefect: fc.Arbitrary<RawDefect> = fc.oneof(
  { arbitrary: fc.constant('none' as const), weight: 6 },
  {
    arbitrary: fc.constantFrom<RawDefect>(
      'no-host',
      'dup-host',
      'http10',
      'http2-version',
      'lowercase-method',
      'cl-short',
      'cl-long-eof',
      'cl-garbage',
      'cl-negative',
      'cl-dup-conflict',
      'cl-dup-same',
      'cl-and-chunked',
      'chunked',
      'chunked-bad',
      'header-ctl-byte',
      'header-obs-fold',
      'header-space-before-colon',
      'header-utf8-value',
      'bare-lf',
      'absolute-form',
      'expect-unknown',
      'many-headers',
      'dup-content-type',
    ),
    weight: 6,
  },
)

/** Defects after which the request is still well-formed HTTP/1.1 that the app must answer itself. */
export const WELL_FORMED_DEFECTS: ReadonlySet<RawDefect> = new Set<RawDefect>([
  'none',
  'http10',
  'chunked',
  'header-utf8-value',
  'absolute-form',
  'many-headers',
  'dup-content-type',
  'cl-short',
])

export type Target = 'listPets' | 'createPet' | 'getPet' | 'other-method' | 'unknown-path'

export const METHODS_OTHER = [
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'SEARCH',
  'LOCK',
  'MKCOL',
  'PURGE',
  'REPORT',
] as const

export interface AbuseCase {
  target: Target
  method: string
  /** Path (or request-target) without the query. */
  path: string
  query: string
  auth: AuthChoice
  requestId: RequestIdChoice
  contentType: string | null
  body: { text: string; mutation: BodyMutation } | null
  extra: Array<[string, string]>
  transport: 'http' | 'http-chunked' | 'raw'
  defect: RawDefect
  /** Last octet of the client's loopback address (127.0.0.x): spreads the per-address limit. */
  client: number
  /** Milliseconds the manual clock moves before the request. */
  advanceMs: number
  /** How many times the request is sent in a row (bursts reach the rate limits and bans). */
  burst: number
}

const common = {
  auth: authChoice,
  requestId: requestIdChoice,
  extra: extraHeaders,
  transport: fc.constantFrom<AbuseCase['transport']>('http', 'http', 'http-chunked', 'raw', 'raw'),
  defect: rawDefect,
  client: fc.oneof({ arbitrary: fc.constant(1), weight: 2 }, { arbitrary: fc.integer({ min: 2, max: 254 }), weight: 3 }),
  advanceMs: fc.oneof(
    { arbitrary: fc.constant(0), weight: 30 },
    { arbitrary: fc.constant(1_000), weight: 3 },
    { arbitrary: fc.constant(61_000), weight: 1 },
  ),
  burst: fc.oneof({ arbitrary: fc.constant(1), weight: 40 }, { arbitrary: fc.constantFrom(61, 130), weight: 1 }),
  query: queryString,
}

const maybeBody = fc.option(fc.record({ text: bodyText, mutation: bodyMutation }), { freq: 5 })

const contentType = fc.oneof(
  { arbitrary: fc.constant<string | null>('application/json'), weight: 6 },
  { arbitrary: fc.constant<string | null>(null), weight: 1 },
  { arbitrary: fc.constantFrom<string | null>(...CONTENT_TYPES), weight: 3 },
)

export const abuseCase: fc.Arbitrary<AbuseCase> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      ...common,
      target: fc.constant<Target>('createPet'),
      method: fc.constant('POST'),
      path: fc.constant('/v1/pets'),
      query: fc.oneof({ arbitrary: fc.constant(''), weight: 5 }, { arbitrary: queryString, weight: 1 }),
      contentType,
      body: fc.oneof(
        { arbitrary: fc.record({ text: bodyText, mutation: bodyMutation }), weight: 12 },
        { arbitrary: fc.constant(null), weight: 1 },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      ...common,
      target: fc.constant<Target>('listPets'),
      method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
      path: fc.constant('/v1/pets'),
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 5 }),
      body: maybeBody,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      ...common,
      target: fc.constant<Target>('getPet'),
      method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
      path: petIdSegment.map((id) => `/v1/pets/${id}`),
      query: fc.oneof({ arbitrary: fc.constant(''), weight: 5 }, { arbitrary: queryString, weight: 1 }),
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 5 }),
      body: maybeBody,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      ...common,
      target: fc.constant<Target>('other-method'),
      method: fc.constantFrom(...METHODS_OTHER),
      path: fc.oneof(
        fc.constant('/v1/pets'),
        petIdSegment.map((id) => `/v1/pets/${id}`),
      ),
      contentType,
      body: maybeBody,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      ...common,
      target: fc.constant<Target>('unknown-path'),
      method: fc.constantFrom('GET', 'POST', 'HEAD', 'DELETE'),
      path: fc.oneof(
        fc.constantFrom(...UNKNOWN_PATHS),
        unicodeString(20)
          .filter((s) => s !== '')
          .map((s) => '/' + pct(s)),
      ),
      contentType,
      body: maybeBody,
    }),
  },
)
