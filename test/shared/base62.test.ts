/** Random ids (src/shared/base62.ts): from a pooled CSPRNG, uniform base62; time-ordered ids sort by their time. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { randomId, timeOrderedId } from '../../src/shared/base62.js'

test('random ids are 16 base62 characters after their prefix, and never repeat across pool refills', () => {
  const ids = new Set<string>()
  // 24 bytes an id, 4 KiB a pool: 2,000 ids refill it a dozen times.
  for (let i = 0; i < 2_000; i++) {
    const id = randomId('key_')
    assert.match(id, /^key_[0-9A-Za-z]{16}$/)
    ids.add(id)
  }
  assert.equal(ids.size, 2_000)
})

test('time-ordered ids: 8 characters of time then 16 random; a later millisecond sorts after, the same one at random', () => {
  const times = [0, 1, 61, 62, 3_843, Date.parse('2026-11-29T08:00:00Z'), Date.parse('2026-11-29T08:00:00.001Z'), 62 ** 8 - 1]
  const ids = times.map((ms) => timeOrderedId('evt_', ms))
  for (const id of ids) assert.match(id, /^evt_[0-9A-Za-z]{24}$/)
  assert.deepEqual([...ids].sort(), ids, 'sorted as their times are')
  assert.equal(ids[0]!.slice(4, 12), '00000000')
  assert.equal(ids[3]!.slice(4, 12), '00000010')
  const sameMs = Array.from({ length: 100 }, () => timeOrderedId('evt_', 1_000))
  assert.equal(new Set(sameMs.map((id) => id.slice(0, 12))).size, 1, 'one time prefix')
  assert.equal(new Set(sameMs).size, 100, 'random after it')
})
