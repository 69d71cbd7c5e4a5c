/**
 * C0 and C1 control characters (U+0000–U+001F, U+007F–U+009F). Names and other text an operator
 * stores are printed on terminals (`keys list`): an escape sequence there can clear the screen,
 * move the cursor or retitle the window, and a newline can forge a row.
 */
const RANGES = '\\u0000-\\u001f\\u007f-\\u009f'

/** A JSON Schema pattern: no control character anywhere. */
export const NO_CONTROL_CHARACTERS = `^[^${RANGES}]*$`

/** What a refused text is told, after its field's name. */
export const CONTROL_CHARACTERS_REFUSED = 'must not contain control characters (U+0000–U+001F, U+007F–U+009F)'

const ANY = new RegExp(`[${RANGES}]`, 'u')
const EVERY = new RegExp(`[${RANGES}]`, 'gu')

export const hasControlCharacter = (text: string): boolean => ANY.test(text)

/**
 * The text with each control character written as a JSON-style escape (`\u001b`), for a terminal:
 * text stored before such characters were refused cannot act on it either. JSON.stringify escapes
 * the C0 ones but leaves U+007F–U+009F as they are; run its output through this too.
 */
export const escapeControlCharacters = (text: string): string =>
  ANY.test(text) ? text.replace(EVERY, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text
