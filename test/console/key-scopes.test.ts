import assert from 'node:assert/strict'
import { test } from 'node:test'
import { scopeBadge, scopesText, scopesToSend, toggleScope } from '../../console/src/key-scopes.js'
import { SCOPES } from '../../src/shared/scopes.js'

// Issue 31: the console marks a key that cannot do everything, and sends scopes only when chosen.
test('scopes in the console: the list badge, the one-line text, what a create sends, a checkbox toggled', () => {
  assert.equal(scopeBadge([...SCOPES]), null, 'a key with every scope has no badge')
  assert.deepEqual(scopeBadge(['pets:read']), { kind: 'read-only', text: 'read-only' })
  assert.deepEqual(scopeBadge(['pets:read', 'orders:read']), { kind: 'read-only', text: 'read-only' })
  assert.deepEqual(scopeBadge(['pets:read', 'pets:write']), { kind: 'scoped', text: 'scoped' })
  assert.deepEqual(scopeBadge(['orders:write']), { kind: 'scoped', text: 'scoped' })

  assert.equal(scopesText([...SCOPES].reverse()), 'all')
  assert.equal(scopesText(['orders:read', 'pets:read']), 'pets:read, orders:read', "in the list's order")

  assert.equal(scopesToSend([...SCOPES]), undefined, "all four: the API's default, not sent")
  assert.deepEqual(scopesToSend(['orders:write', 'pets:read']), ['pets:read', 'orders:write'])

  assert.deepEqual(toggleScope(['orders:read'], 'pets:write', true), ['pets:write', 'orders:read'])
  assert.deepEqual(toggleScope(['pets:read', 'pets:write'], 'pets:read', false), ['pets:write'])
  assert.deepEqual(toggleScope(['pets:read'], 'pets:read', true), ['pets:read'], 'each once')
})
