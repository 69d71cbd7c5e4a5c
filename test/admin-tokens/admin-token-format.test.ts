/** The admin token format: its own prefix, the API keys' checksum, a display prefix, redaction. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { generateAdminToken, generateKey, isWellFormedAdminToken, isWellFormedKey, looksLikeApiKey } from '../../src/keys/api-key.js'
import { displayPrefix, redactKeys } from '../../src/shared/key-redaction.js'

test('as_admin_ + 32 base62 + a 6-character checksum; any one-character change is refused', () => {
  const token = generateAdminToken()
  assert.match(token, /^as_admin_[0-9A-Za-z]{38}$/)
  assert.ok(isWellFormedAdminToken(token))
  const chars = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  for (let i = 9; i < token.length; i++) {
    const c = chars[(chars.indexOf(token[i]!) + 1) % chars.length]!
    assert.equal(isWellFormedAdminToken(token.slice(0, i) + c + token.slice(i + 1)), false, `position ${i}`)
  }
  assert.equal(new Set(Array.from({ length: 200 }, generateAdminToken)).size, 200)
})

test('an admin token is never an API key and the reverse', () => {
  const token = generateAdminToken()
  const key = generateKey('production')
  assert.equal(isWellFormedKey(token, 'production'), false)
  assert.equal(isWellFormedKey(token, 'staging'), false)
  assert.equal(isWellFormedAdminToken(key), false)
  assert.equal(looksLikeApiKey(key), true)
  assert.equal(looksLikeApiKey(generateKey('staging')), true)
  assert.equal(looksLikeApiKey(token), false)
})

test('display prefixes and redaction keep the prefix and 4 characters only', () => {
  const token = generateAdminToken()
  const key = generateKey('staging')
  assert.equal(displayPrefix(token), token.slice(0, 13))
  assert.equal(displayPrefix(key), key.slice(0, 12))
  assert.equal(redactKeys(`/admin/v1/keys?x=${token}&y=${key}`), `/admin/v1/keys?x=${token.slice(0, 13)}…&y=${key.slice(0, 12)}…`)
})
