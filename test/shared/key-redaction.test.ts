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
    '/v1/pets?q=%61s_live_short',
    `/v1/pets?q=%41S_LIVE_${key.slice(8)}`, // not a key: the prefix is lower-case
    `/v1/pets?q=as_live_${key.slice(8, 40)}%2F${key.slice(41)}`, // a '/' inside is no key character
    '/%E0%A4%A?broken=%ZZ%',
  ])
    assert.equal(redactKeys(text), text, text)
})
