/** The prefix (`as_live_`, `as_test_`, `as_admin_`) and the first 4 random characters. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, secret.indexOf('_', 3) + 5)
}

/**
 * A key or admin token pasted into a URL (by mistake) must not reach a log or an answer: only its
 * display prefix does. The router and the query parser decode `%61s%5Flive_…` into a key, so the
 * redaction matches the decoded form too, and any number of encodings deep (`%2561` is an
 * encoded `%61`): each character of a key either as itself or percent-encoded, in either case of
 * hex digit. The rest of the text is left as it was sent.
 *
 * Anything shaped like a secret is cut, not only a well-formed one: a prefix (`as_live_`,
 * `as_test_`, `as_admin_`) and a run of key characters of any length beyond the display prefix's
 * four. A key with a character lost or one too many in copying is still nearly all of the secret.
 */
export function redactKeys(text: string): string {
  // The access line runs this on every request: a URL without '%' (nearly all) takes one scan for
  // the prefix, and one with '%' a regex test before any replacing.
  if (!text.includes('%')) return text.includes('as_') ? text.replace(KEY_IN_TEXT, redacted) : text
  return ENCODED_PREFIX.test(text) ? text.replace(ENCODED_KEY_IN_TEXT, redacted) : text
}

/** More key characters than a display prefix shows. */
const SECRET_RUN = '{5,}'
const KEY_IN_TEXT = new RegExp(`as_(live|test|admin)_[0-9A-Za-z]${SECRET_RUN}`, 'g')

/** Each character as itself or percent-encoded, as often as it takes (`a`, `%61`, `%2561`, …). */
const encodable = (text: string) => [...text].map((c) => `(?:${c}|%(?:25)*${hexInEitherCase(c)})`).join('')
const hexInEitherCase = (c: string) =>
  c
    .charCodeAt(0)
    .toString(16)
    .replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`)

/** 0-9, A-Z, a-z percent-encoded: 0x30-0x39, 0x41-0x5A, 0x61-0x7A. */
const ENCODED_ALPHANUMERIC = '%(?:25)*(?:3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa])'
const ENCODED_PREFIX = new RegExp(encodable('as_'))
const ENCODED_KEY_IN_TEXT = new RegExp(
  `${encodable('as_')}(?:${encodable('live')}|${encodable('test')}|${encodable('admin')})${encodable('_')}` +
    `(?:[0-9A-Za-z]|${ENCODED_ALPHANUMERIC})${SECRET_RUN}`,
  'g',
)

/** What stands for a matched key: its display prefix, decoded (every escape in a match is a valid one). */
function redacted(match: string): string {
  let key = match
  while (key.includes('%')) key = decodeURIComponent(key)
  return `${displayPrefix(key)}…`
}
