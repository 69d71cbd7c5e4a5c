/**
 * C0 and C1 control characters (U+0000–U+001F, U+007F–U+009F). Names and other text an operator
 * stores are printed on terminals (`keys list`): an escape sequence there can clear the screen,
 * move the cursor or retitle the window, and a newline can forge a row.
 */
const RANGES = '\\u0000-\\u001f\\u007f-\\u009f'

/**
 * Characters that change how the text around them is shown, or show as nothing: the text-direction
 * controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: `\u202eevil` shows as "live"),
 * the invisible ones (soft hyphen U+00AD, U+180E, zero-width space U+200B, U+2060–U+2064, the
 * deprecated format characters U+206A–U+206F, U+FEFF, the interlinear annotations U+FFF9–U+FFFB,
 * the tags U+E0000–U+E007F) and the line and paragraph separators U+2028, U+2029 (a line break
 * to some terminals and editors). Not the zero-width joiners U+200C and U+200D, nor the variation
 * selectors: Persian, the Indic scripts and emoji need them.
 */
const HIDDEN_CODE_POINTS: ReadonlyArray<readonly [number, number]> = [
  [0xad, 0xad],
  [0x61c, 0x61c],
  [0x180e, 0x180e],
  [0x200b, 0x200b],
  [0x200e, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0xfeff, 0xfeff],
  [0xfff9, 0xfffb],
  [0xe0000, 0xe007f],
]
const HIDDEN_RANGES = HIDDEN_CODE_POINTS.map(([from, to]) =>
  from === to ? `\\u{${from.toString(16)}}` : `\\u{${from.toString(16)}}-\\u{${to.toString(16)}}`,
).join('')

/** A JSON Schema pattern: no control character anywhere. */
export const NO_CONTROL_CHARACTERS = `^[^${RANGES}]*$`

/** What a refused text is told, after its field's name. */
export const CONTROL_CHARACTERS_REFUSED = 'must not contain control characters (U+0000–U+001F, U+007F–U+009F)'

const ANY = new RegExp(`[${RANGES}]`, 'u')
const HIDDEN = new RegExp(`[${HIDDEN_RANGES}]`, 'u')
const ANY_SHOWN_ESCAPED = new RegExp(`[${RANGES}${HIDDEN_RANGES}]`, 'u')
const EVERY_SHOWN_ESCAPED = new RegExp(`[${RANGES}${HIDDEN_RANGES}]`, 'gu')

export const hasControlCharacter = (text: string): boolean => ANY.test(text)

/** A code point as Unicode writes it: U+202E, U+E0041. */
const codePointName = (n: number): string => `U+${n.toString(16).toUpperCase().padStart(4, '0')}`

/** The text-direction and invisible characters, as a document lists them: "U+00AD, …, U+E0000–U+E007F". */
export const HIDDEN_CHARACTERS_TEXT = HIDDEN_CODE_POINTS.map(([from, to]) =>
  from === to ? codePointName(from) : `${codePointName(from)}–${codePointName(to)}`,
).join(', ')

/**
 * What a refused text is told, after its field's name, when it holds a text-direction or invisible
 * character (see HIDDEN_CODE_POINTS): the first one, as U+XXXX. Undefined for a text without any.
 */
export function hiddenCharacterRefusal(text: string): string | undefined {
  const found = HIDDEN.exec(text)
  return found === null
    ? undefined
    : `must not contain ${codePointName(found[0].codePointAt(0)!)} (no text-direction or invisible characters)`
}

/**
 * The text with each control, text-direction and invisible character written as a JSON-style
 * escape (`\u001b`, `\u202e`; a tag character as its two UTF-16 halves, `\udb40\udc41`), for a
 * terminal: text stored before such characters were refused cannot act on it either. JSON.stringify
 * escapes the C0 ones but leaves the others as they are; run its output through this too.
 */
export const escapeControlCharacters = (text: string): string =>
  ANY_SHOWN_ESCAPED.test(text) ? text.replace(EVERY_SHOWN_ESCAPED, escapeUnits) : text

function escapeUnits(c: string): string {
  let out = ''
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`
  return out
}

/**
 * U+0000 (NUL) in any text a client sends: PostgreSQL can neither store it nor take it as a query
 * parameter, SQLite can, so it is refused before either is asked (the same answer on both).
 */
export const NUL_REFUSED = 'must not contain U+0000 (NUL)'
/** The same, of an object one of whose keys holds a NUL. */
export const NUL_IN_FIELD_NAME_REFUSED = 'must not have a field name containing U+0000 (NUL)'

/** Where a NUL is in a parsed JSON value (or query string): a string holding one, or a key holding one. */
export interface NulPlace {
  /** Object keys and array indexes from the root to the string, or to the key. */
  path: Array<string | number>
  /** True when the last step of `path` is the key holding the NUL, not the way to a string holding one. */
  inKey: boolean
}

export function findNul(value: unknown): NulPlace[] {
  if (!holdsNul(value)) return []
  const found: NulPlace[] = []
  // Iterative: a body may be nested as deep as its parser allows.
  const pending: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }]
  while (pending.length > 0) {
    const { value: v, path } = pending.pop()!
    if (typeof v === 'string') {
      if (v.includes('\u0000')) found.push({ path, inKey: false })
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) pending.push({ value: v[i], path: [...path, i] })
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i]!
        if (key.includes('\u0000')) found.push({ path: [...path, key], inKey: true })
        pending.push({ value: inner, path: [...path, key] })
      }
    }
  }
  return found
}

/** Whether any string or key in `value` holds a NUL: the check every request pays, so no path is kept. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000')
  if (value === null || typeof value !== 'object') return false
  const pending: object[] = [value]
  while (pending.length > 0) {
    const v = pending.pop() as Record<string, unknown>
    const array = Array.isArray(v)
    for (const key in v) {
      if (!array && key.includes('\u0000')) return true
      const inner = v[key]
      if (typeof inner === 'string') {
        if (inner.includes('\u0000')) return true
      } else if (inner !== null && typeof inner === 'object') pending.push(inner)
    }
  }
  return false
}
