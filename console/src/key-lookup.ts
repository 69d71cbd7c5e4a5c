/**
 * What the "Find a key" box sends to POST /admin/v1/keys/lookup: a whole key (found by its hash)
 * or a display prefix (`as_live_AbCd`, as logs and the key list show it). The text is trimmed, and
 * a key pasted with its quotes or a trailing `…` (the redaction mark) still reads as what it is.
 */
export type LookupRequest = { key: string } | { prefix: string }

const WHOLE_KEY = /^as_(live|test)_[0-9A-Za-z]{38}$/
const PREFIX = /^as_(live|test)_[0-9A-Za-z]{4,37}$/

/** The request for `text`, or what is wrong with it (a message for the operator). */
export function lookupRequest(text: string): LookupRequest | { problem: string } {
  const cleaned = text
    .trim()
    .replace(/^["'`]+|["'`]+$/g, '')
    .replace(/…$/, '')
  if (WHOLE_KEY.test(cleaned)) return { key: cleaned }
  if (PREFIX.test(cleaned)) return { prefix: cleaned.slice(0, cleaned.indexOf('_', 3) + 5) }
  return { problem: 'Paste a whole key (as_live_… or as_test_…, 46 characters) or its prefix (as_live_ and 4 characters).' }
}
