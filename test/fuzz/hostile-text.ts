/**
 * Text that the stores, the screens and the logs take differently from what it looks like, for
 * every generator of the fuzzer: U+0000 (PostgreSQL refuses it, SQLite stores it), text-direction
 * and invisible characters (`\u202eevil` reads "live"), dates that do not exist (`Date.parse`
 * moves 30 February to March), and text shaped like a key's secret with a character lost or one
 * too many (which must never be echoed or logged). A leaf: generators only, no operation.
 */
import fc from 'fast-check'

export type HostileKind = 'nul' | 'hidden' | 'impossible-date' | 'key-shaped'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** A stand-in secret: a key is a prefix and 38 of these (32 random, a 6-character checksum). */
const SECRET = 'k7Qm2ZpX9aLr4TfB8nVw1YcH6sJd3GuE0oKi5P'

export const HOSTILE_TEXT: Record<HostileKind, readonly string[]> = {
  nul: ['\u0000', 'Rex\u0000', 'a\u0000b', '\u0000\u0000', '2030-01-01T00:00:00Z\u0000'],
  hidden: ['\u202eevil', 'a\u2066b\u2069', 'zero\u200bwidth', '\ufeffbom', 'soft\u00adhyphen', 'line\u2028break', 'tag\u{e0041}'],
  'impossible-date': [
    '2027-02-30T00:00:00Z',
    '2030-02-29T12:00:00Z',
    '2030-04-31T00:00:00+02:00',
    '2030-01-01T24:00:00Z',
    '2030-06-30T23:59:60Z',
    '2030-13-01T00:00:00Z',
    '2030-01-01T00:00:00+24:00',
  ],
  'key-shaped': [
    `as_live_${SECRET.slice(0, -1)}`,
    `as_live_${SECRET}x`,
    `as_test_${SECRET.slice(0, 20)}${SECRET.slice(21)}`,
    `as_admin_${SECRET.slice(0, 30)}`,
    `as_live_${SECRET.slice(0, 10)}`,
  ],
}

/** Every hostile text, for the generators of strings anywhere (bodies, queries, request ids). */
export const HOSTILE_STRINGS: readonly string[] = Object.values(HOSTILE_TEXT).flat()

/** A secret-shaped text of any length around a key's, under any prefix. */
export const keyShapedText: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom('as_live_', 'as_test_', 'as_admin_'), fc.string({ unit: fc.constantFrom(...BASE62), minLength: 5, maxLength: 45 }))
  .map(([prefix, secret]) => prefix + secret)

export const hostileText = (kind: HostileKind): fc.Arbitrary<string> =>
  kind === 'key-shaped' ? fc.oneof(fc.constantFrom(...HOSTILE_TEXT['key-shaped']), keyShapedText) : fc.constantFrom(...HOSTILE_TEXT[kind])

/**
 * More of a secret than its display prefix (4 characters after the prefix), or any of a webhook
 * endpoint's signing secret (which has no display prefix): what no error answer and no log line may
 * hold. (The answers that make a key or a webhook secret carry it on purpose.)
 */
export const SECRET_SHAPED = /as_(live|test|admin)_[0-9A-Za-z]{5,}|whsec_[0-9A-Za-z+/]{5,}/
