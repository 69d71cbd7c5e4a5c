import type { FastifyInstance } from 'fastify'
import { parse } from 'lossless-json'
import { ApiError } from '../shared/errors.js'
import { settingsOf } from './route-settings.js'

/**
 * The JSON body parser. JSON.parse would round integers above 2^53 before any validation could
 * see them, so numbers are parsed from their source text (parseNumber below). lossless-json also
 * stores a "__proto__" key as a plain field, which the schema then rejects as unknown. A key an
 * object repeats is refused, whatever its values (no "last one wins" ambiguity: see
 * firstRepeatedKey). Invalid UTF-8 is rejected rather than replaced.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
/**
 * The one way to write an integer, in a body as in a query or path (see http/validation.ts). Zero
 * has one spelling: `-0` would be stored as 0, so the answer would not be what was sent.
 */
export const PLAIN_INTEGER = /^(0|-?[1-9]\d*)$/

/**
 * A plain integer literal becomes a number (safe) or bigint (exact). A fraction or exponent that
 * denotes an integer (1.0, 1e3) becomes NaN, which no integer field accepts: integers are written
 * one way everywhere. Other numbers (1.5) stay numbers.
 */
function parseNumber(text: string): number | bigint {
  const n = Number(text)
  if (PLAIN_INTEGER.test(text)) return Number.isSafeInteger(n) ? n : BigInt(text)
  return Number.isInteger(n) ? Number.NaN : n
}

type WellFormed = string & { isWellFormed(): boolean }

function rejectLoneSurrogates(key: string, value: unknown): unknown {
  if (!(key as WellFormed).isWellFormed() || (typeof value === 'string' && !(value as WellFormed).isWellFormed())) {
    throw new ApiError('invalid_request', 'Request body contains a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape)')
  }
  return value
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * The first key that an object of `text` (valid JSON: lossless-json has parsed it) names twice, and
 * where. lossless-json refuses a repeated key only when its two values differ and keeps one of
 * equal ones, so `{"name":"a","name":"a"}` would pass as one field; docs/api.md says a repeated
 * key is refused. Keys are compared decoded (`"a"` and `"\u0061"` are one key). One pass over
 * the text, after the parse: only bodies that parsed pay for it.
 */
export function firstRepeatedKey(text: string): { key: string; position: number } | undefined {
  // Per open object its keys so far; an open array is undefined.
  const open: Array<Set<string> | undefined> = []
  let keyNext = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      let end = i + 1
      while (text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1
      const keys = keyNext ? open.at(-1) : undefined
      if (keys !== undefined) {
        const key = JSON.parse(text.slice(i, end + 1)) as string
        if (keys.has(key)) return { key, position: i + 1 }
        keys.add(key)
      }
      keyNext = false
      i = end
    } else if (c === 0x7b /* { */) {
      open.push(new Set())
      keyNext = true
    } else if (c === 0x5b /* [ */) open.push(undefined)
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) open.pop()
    else if (c === 0x2c /* , */) keyNext = open.at(-1) !== undefined
  }
  return undefined
}

export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw new ApiError('invalid_request', 'Request body is empty; expected a JSON object')
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    throw new ApiError('invalid_request', 'Request body is not valid UTF-8')
  }
  let value: unknown
  try {
    // A "\uD800" escape decodes to a lone surrogate, which storage would turn into U+FFFD: the
    // 201 would then confirm a name that differs from the one stored.
    value = parse(text, rejectLoneSurrogates, parseNumber)
  } catch (error) {
    if (error instanceof ApiError) throw error
    if (error instanceof RangeError) throw new ApiError('invalid_request', 'Request body is nested too deeply')
    const detail = error instanceof Error ? error.message : 'parse error'
    throw new ApiError('invalid_request', `Request body is not valid JSON: ${detail}`)
  }
  const repeated = firstRepeatedKey(text)
  // In lossless-json's words, as for a repeated key with different values.
  if (repeated !== undefined)
    throw new ApiError(
      'invalid_request',
      `Request body is not valid JSON: Duplicate key '${repeated.key}' encountered at position ${repeated.position}`,
    )
  return value
}

/**
 * application/json is the only body type. JSON is UTF-8 (RFC 8259): a declared charset other than
 * UTF-8 is refused with a message that names the charset, not the media type.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = /;\s*charset=("?)([^";]+)\1/i.exec(request.headers['content-type'] ?? '')?.[2]
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
      done(
        new ApiError(
          'unsupported_media_type',
          `charset ${JSON.stringify(charset)} is not supported: JSON bodies must be UTF-8 (charset=utf-8 or none)`,
        ),
        undefined,
      )
      return
    }
    // A route that takes no body: an empty one with this Content-Type is none, not malformed JSON.
    if ((body as Buffer).length === 0 && settingsOf(request).noBody === true) {
      done(null, undefined)
      return
    }
    // Bytes only: the route checks them (a signature) before it parses them (parseJsonBody), so a
    // body it refuses costs no parse.
    if (settingsOf(request).rawBody === true) {
      request.rawBody = body as Buffer
      done(null, undefined)
      return
    }
    try {
      done(null, parseJsonBody(body as Buffer))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
}
