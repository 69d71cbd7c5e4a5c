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
 */
export function redactKeys(text: string): string {
  // The access line runs this on every request: a URL without '%' (nearly all) takes one scan for
  // the prefix, and one with '%' a regex test before any replacing.
  if (!text.includes('%')) return text.includes('as_') ? text.replace(KEY_IN_TEXT, redacted) : text
  return ENCODED_PREFIX.test(text) ? text.replace(ENCODED_KEY_IN_TEXT, redacted) : text
}

const KEY_IN_TEXT = /as_(live|test|admin)_[0-9A-Za-z]{38}/g

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
    `(?:[0-9A-Za-z]|${ENCODED_ALPHANUMERIC}){38}`,
  'g',
)

/** What stands for a matched key: its display prefix, decoded (every escape in a match is a valid one). */
function redacted(match: string): string {
  let key = match
  while (key.includes('%')) key = decodeURIComponent(key)
  return `${displayPrefix(key)}…`
}
