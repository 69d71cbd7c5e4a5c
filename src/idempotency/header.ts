import { ApiError } from '../shared/errors.js'

const MAX_KEY_LENGTH = 255
const BARE_KEY = /^[\x21-\x7e]+$/
/** The draft's form, a Structured Field string: visible ASCII inside quotes, with \" and \\ escapes. */
const QUOTED_KEY = /^"((?:[\x21\x23-\x5b\x5d-\x7e]|\\["\\])+)"$/
const INVALID_KEY = 'Idempotency-Key must be 1 to 255 visible ASCII characters, bare or as a quoted string ("..."), sent once'

/**
 * The Idempotency-Key header's key (IETF draft-ietf-httpapi-idempotency-key-header), or undefined
 * without the header. Accepted: the draft's quoted string ("abc", with \" and \\ escapes) and the
 * bare form most APIs use (abc); both name the same key. A repeated header reaches us joined with
 * ", " and is refused (the space is not allowed).
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string') throw new ApiError('invalid_request', INVALID_KEY)
  let key: string | undefined
  if (header.startsWith('"')) key = QUOTED_KEY.exec(header)?.[1]?.replace(/\\(["\\])/g, '$1')
  else if (BARE_KEY.test(header)) key = header
  if (key === undefined || key.length > MAX_KEY_LENGTH) throw new ApiError('invalid_request', INVALID_KEY)
  return key
}
