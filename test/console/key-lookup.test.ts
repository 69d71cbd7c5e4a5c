import assert from 'node:assert/strict'
import { test } from 'node:test'
import { lookupRequest } from '../../console/src/key-lookup.js'
import { generateKey } from '../../src/keys/api-key.js'

// Issue 32: the console's "Find a key" box takes what an operator pastes from a repository or a log.
test('find a key: a whole key is looked up as a key, a prefix (or a redacted key) as its display prefix, anything else refused', () => {
  const key = generateKey('production')
  assert.deepEqual(lookupRequest(`  ${key}\n`), { key })
  assert.deepEqual(lookupRequest(`"${key}"`), { key }, 'quotes of a config file are not part of it')
  assert.deepEqual(lookupRequest('as_live_AbCd'), { prefix: 'as_live_AbCd' })
  assert.deepEqual(lookupRequest('as_test_AbCd…'), { prefix: 'as_test_AbCd' }, 'as the access log redacts a key')
  assert.deepEqual(lookupRequest(key.slice(0, 20)), { prefix: key.slice(0, 12) }, 'a key cut short: its display prefix')
  for (const text of ['', 'as_live_Ab', 'as_admin_AbCd', 'key_123', `${key}x`]) assert.ok('problem' in lookupRequest(text), text)
})
