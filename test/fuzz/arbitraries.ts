/**
 * fast-check generators for the HTTP fuzzer, independent of any one operation: JSON text, numbers
 * and strings at their edges, body bytes, headers, credentials, raw-socket defects. What depends
 * on an operation (its path, parameters and body) is generated from the OpenAPI document by
 * requests.ts. Cases are symbolic and printable (credentials are names, resolved to real keys or
 * tokens at run time) so a failure's counterexample reads well and shrinks.
 */
import fc from 'fast-check'
import { INT64_MAX, INT64_MIN } from '../../src/shared/int64.js'
import { HOSTILE_STRINGS, HOSTILE_TEXT, keyShapedText } from './hostile-text.js'

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
  // NUL, text-direction and invisible characters, dates that do not exist, malformed keys.
  { arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((s) => JSON.stringify(s)), weight: 2 },
)

// ---------------------------------------------------------------------------------------------
// JSON bodies, as text (so they can carry duplicate keys, bigints, __proto__ and friends)

/** Object keys that are nobody's field: prototype names, an id a client must not send, the empty key. */
export const ODD_KEY_NAMES = [
  'id',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  '$ref',
  'valueOf',
  '__defineGetter__',
] as const

/** A JSON object key (as JSON text) among `names` (a schema's fields and their near misses) and the odd ones. */
export const jsonKeyAmong = (names: readonly string[]) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...names, ...ODD_KEY_NAMES).map((k) => JSON.stringify(k)), weight: 4 },
    { arbitrary: jsonStringLiteral, weight: 1 },
    { arbitrary: fc.constant('"__pro\\u0074o__"'), weight: 1 },
  )

const jsonKey = jsonKeyAmong([])

export const jsonScalar = fc.oneof(jsonNumberLiteral, jsonStringLiteral, fc.constantFrom('true', 'false', 'null'))

export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, jsonScalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }).map((a) => `[${a.join(',')}]`),
  object: fc.array(fc.tuple(jsonKey, tie('value')), { maxLength: 6 }).map((kv) => `{${kv.map(([k, v]) => `${k}:${v}`).join(',')}}`),
})).value

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
        { arbitrary: fc.constantFrom('😀'.repeat(200), 'é'.repeat(200), 'a'.repeat(200), 'x', ' ', '"\\/'), weight: 1 },
        // Valid names all: an animal's name may read right to left, look like a date or a key.
        { arbitrary: fc.constantFrom(...HOSTILE_STRINGS.filter((s) => !s.includes('\u0000'))), weight: 1 },
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
  // Valid names: 1 to 200 code points, not only white space, no NUL (README, Validation).
  .filter((p) => [...p.name].length >= 1 && /\S/u.test(p.name) && !p.name.includes('\u0000'))
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

export const percentEncodeAll = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0').toUpperCase()).join('')

/** Path segments for an integer parameter: int64 edges, other spellings of a number, encodings, junk. */
export const INT_SEGMENTS = [
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

/** Path segments for a string parameter that no pattern of an id accepts: encodings, dot segments, lengths around the 100-character limit. */
export const PATH_ODDITIES = [
  '%20',
  '%2F',
  '%ZZ',
  '%',
  '%00',
  '%C3%28',
  '%E2%82%AC',
  '..',
  '.',
  '%2E%2E',
  '1;x',
  '{1}',
  '%22',
  'null',
  'a'.repeat(100),
  'a'.repeat(101),
  'a'.repeat(5000),
] as const

/** Paths that are no API's (the rest are derived from each document's templates: requests.ts). Not '/': it answers 200 with where the docs are. */
export const FOREIGN_PATHS = ['/store/orders', '/%', '/%ZZ', '/' + 'a'.repeat(3000), '*'] as const

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
  | 'read-only'
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
      'read-only',
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
    ...HOSTILE_TEXT['key-shaped'],
  ),
  fc.string({ maxLength: 40 }),
  keyShapedText,
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
  /** The operationId the case was generated for, or 'other-method' / 'unknown-path'. */
  target: string
  method: string
  /** Path (or request-target) without the query. */
  path: string
  query: string
  auth: AuthChoice
  requestId: RequestIdChoice
  contentType: string | null
  body: { text: string; mutation: BodyMutation } | null
  /** Headers the operation documents (e.g. Idempotency-Key), each value sent as a header line. */
  headers: Array<[string, string]>
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

/** The parts of a case that do not depend on the operation. */
export const caseCommon = {
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
}

export const contentType = fc.oneof(
  { arbitrary: fc.constant<string | null>('application/json'), weight: 6 },
  { arbitrary: fc.constant<string | null>(null), weight: 1 },
  { arbitrary: fc.constantFrom<string | null>(...CONTENT_TYPES), weight: 3 },
)
