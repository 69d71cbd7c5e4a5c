/** The canonical body of a create under an Idempotency-Key (pets/idempotent-creates.ts); its HTTP behaviour is tested with createPet. */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { orderFingerprint } from '../../src/orders/placement.js'
import { fingerprintOf } from '../../src/pets/idempotent-creates.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

test('fingerprintOf: equal for equal fields (number or bigint), different otherwise', () => {
  assert.equal(fingerprintOf({ name: 'a', categoryId: 1 }), fingerprintOf({ name: 'a', categoryId: 1n }))
  assert.notEqual(fingerprintOf({ name: 'a', categoryId: 1 }), fingerprintOf({ name: 'a', categoryId: 1, status: 'sold' }))
  assert.notEqual(fingerprintOf({ name: 'a,1', categoryId: 1 }), fingerprintOf({ name: 'a', categoryId: 11 }))
})

test('the stored forms: a record written by an earlier release still replays, and a create and an order never match', () => {
  assert.equal(fingerprintOf({ name: 'Rex', categoryId: 7, status: 'available' }), sha256('["Rex","7","available"]'))
  assert.equal(fingerprintOf({ name: 'Rex', categoryId: 7 }), sha256('["Rex","7",null]'))
  assert.equal(orderFingerprint(1), sha256('["order","1"]'))
  assert.equal(orderFingerprint(9_223_372_036_854_775_807n), sha256('["order","9223372036854775807"]'))
})
