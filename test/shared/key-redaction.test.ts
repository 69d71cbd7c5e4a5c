import assert from 'node:assert/strict'
import { test } from 'node:test'
import { generateAdminToken, generateKey } from '../../src/keys/api-key.js'
import { redactKeys } from '../../src/shared/key-redaction.js'

/** Every character percent-encoded, with upper- or lower-case hex digits. */
const encodeAll = (text: string, hexCase: 'upper' | 'lower') =>
  [...text].map((c) => `%${c.charCodeAt(0).toString(16)[hexCase === 'upper' ? 'toUpperCase' : 'toLowerCase']()}`).join('')

test('a key or admin token percent-encoded in any part, in either hex case, is redacted to its display prefix', () => {
  const live = generateKey('production')
  const staging = generateKey('staging')
  const admin = generateAdminToken()
  const cases: Array<[string, string]> = [
    [`/as%5Flive_${live.slice(8)}`, `/${live.slice(0, 12)}…`],
    [`/as%5flive_${live.slice(8)}`, `/${live.slice(0, 12)}…`],
    [`/v1/pets?api_key=%61s_live_${live.slice(8)}&limit=5`, `/v1/pets?api_key=${live.slice(0, 12)}…&limit=5`],
    [`/v1/pets?k=${encodeAll(live, 'upper')}`, `/v1/pets?k=${live.slice(0, 12)}…`],
    [`/v1/pets?k=${encodeAll(staging, 'lower')}`, `/v1/pets?k=${staging.slice(0, 12)}…`],
    // Only the secret part encoded, or an encoding of an encoding (a client that encoded twice).
    [`/x?k=as_admin_${encodeAll(admin.slice(9), 'lower')}`, `/x?k=${admin.slice(0, 13)}…`],
    [`/x?k=%2561s%255Flive_${live.slice(8)}`, `/x?k=${live.slice(0, 12)}…`],
    // The rest of the URL stays as it was sent, escapes and all.
    [`/a%20b/${encodeURIComponent(admin)}?q=%C3%A9`, `/a%20b/${admin.slice(0, 13)}…?q=%C3%A9`],
  ]
  for (const [url, expected] of cases) assert.equal(redactKeys(url), expected, url)
})

test('text with no key, encoded or not, is left as it is', () => {
  const key = generateKey('production')
  for (const text of [
    '/v1/pets?limit=5',
    // No more than a display prefix shows.
    '/v1/pets?q=%61s_live_shor',
    '/v1/pets?q=as_admin_',
    `/v1/pets?q=%41S_LIVE_${key.slice(8)}`, // not a key: the prefix is lower-case
    '/%E0%A4%A?broken=%ZZ%',
  ])
    assert.equal(redactKeys(text), text, text)
})

test('a malformed key or token is redacted all the same: a character lost or added, cut short, split, encoded', () => {
  const key = generateKey('production')
  const staging = generateKey('staging')
  const admin = generateAdminToken()
  const shown = `${key.slice(0, 12)}…`
  const cases: Array<[string, string]> = [
    [key.slice(0, -1), shown],
    [key.slice(0, 20) + key.slice(21), shown],
    [`${key}x`, shown],
    [key.slice(0, 20) + 'Q' + key.slice(20), shown],
    [key.slice(0, 13), shown],
    [`${staging.slice(0, -1)} and ${admin}Z`, `${staging.slice(0, 12)}… and ${admin.slice(0, 13)}…`],
    // A '/' inside is no key character: the run before it is cut, what follows it has no prefix.
    [`/v1/pets?q=as_live_${key.slice(8, 40)}%2F${key.slice(41)}`, `/v1/pets?q=${key.slice(0, 12)}…%2F${key.slice(41)}`],
    [`/v1/pets?${encodeAll(key.slice(0, -1), 'lower')}=1`, `/v1/pets?${shown}=1`],
    [`unknown query parameter '${key.slice(0, -1)}'`, `unknown query parameter '${shown}'`],
  ]
  for (const [text, expected] of cases) assert.equal(redactKeys(text), expected, text)
  // Nothing of the secret past the display prefix is left, whatever was lost or added.
  for (let i = 8; i < key.length; i++) {
    for (const variant of [key.slice(0, i) + key.slice(i + 1), key.slice(0, i) + 'x' + key.slice(i)]) {
      const out = redactKeys(`GET /v1/pets?${variant}=1`)
      assert.equal(out.includes(key.slice(12, 20)) || out.includes(key.slice(-8)), false, out)
    }
  }
})
