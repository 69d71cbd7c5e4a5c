import assert from 'node:assert/strict'
import { test } from 'node:test'
import { auditDetailText } from '../../console/src/audit-text.js'

// Issue 43: a revocation's row in the audit table had an empty Details cell, read as "nothing
// recorded"; an entry without details now says what its action did.
test('audit details: a revocation without details says what it did; details otherwise, field by field', () => {
  assert.match(auditDetailText({ action: 'key.revoke', details: {} }), /^revoked/)
  assert.equal(auditDetailText({ action: 'key.read', details: {} }), '—')
  assert.equal(
    auditDetailText({ action: 'key.revoke', details: { alsoRevoked: ['key_A'], leakUrl: 'https://x' } }),
    'alsoRevoked: ["key_A"]; leakUrl: https://x',
  )
})
