/** The one rule both stores apply to a pets row: an id beyond 2^53 is refused, never rounded. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { petIdOf, toPet } from '../../src/storage/pet-row.js'

test('petIdOf keeps a safe id, as a number whichever way the driver gave it', () => {
  assert.equal(petIdOf(42), 42)
  assert.equal(petIdOf(42n), 42)
  assert.equal(petIdOf(2n ** 53n - 1n), Number.MAX_SAFE_INTEGER)
})

test('petIdOf refuses an id beyond 2^53 rather than rounding it', () => {
  assert.throws(() => petIdOf(2n ** 53n + 1n), /pet id 9007199254740993 is beyond 2\^53/)
})

test('toPet: the refusal, a missing status left out, a large categoryId kept exact', () => {
  assert.throws(() => toPet({ id: 2n ** 53n + 1n, name: 'Rex', category_id: 1, status: null }), /beyond 2\^53/)
  assert.deepEqual(toPet({ id: 7n, name: 'Rex', category_id: 2n ** 60n, status: null }), { id: 7, name: 'Rex', categoryId: 2n ** 60n })
  assert.deepEqual(toPet({ id: 7, name: 'Rex', category_id: 3, status: 'sold' }), { id: 7, name: 'Rex', categoryId: 3, status: 'sold' })
})
