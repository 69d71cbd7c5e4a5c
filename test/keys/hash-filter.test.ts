/**
 * The Bloom filter of known secrets: no false negative, and the false-positive rate of its sizing
 * (10 bits per entry, 7 positions: 0.82% in theory at capacity), measured on deterministic
 * SHA-256 hashes so that the figures are the same on every run.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { BITS_PER_ENTRY, HashFilter, MIN_CAPACITY } from '../../src/keys/hash-filter.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const PROBES = 100_000

/** The share of `PROBES` hashes never added that the filter may contain. */
function falsePositiveRate(filter: HashFilter): number {
  let positives = 0
  for (let i = 0; i < PROBES; i++) if (filter.mayContain(sha256(`never added ${i}`))) positives++
  return positives / PROBES
}

test('filled to its capacity: every hash added is found, about 1% of the others are false positives', () => {
  const filter = new HashFilter(50_000)
  assert.equal(filter.capacity, 50_000)
  assert.equal(filter.bytes, (50_000 * BITS_PER_ENTRY) / 8)
  for (let i = 0; i < filter.capacity; i++) filter.add(sha256(`secret ${i}`))
  for (let i = 0; i < filter.capacity; i++) assert.ok(filter.mayContain(sha256(`secret ${i}`)), `secret ${i}`)
  assert.equal(filter.full, false)
  const rate = falsePositiveRate(filter)
  assert.ok(rate > 0.005 && rate < 0.011, `false positives at capacity: ${(rate * 100).toFixed(2)}% (theory 0.82%)`)
})

test('at half its capacity (as loaded: sized for twice what the store holds), far fewer', () => {
  const filter = new HashFilter(50_000)
  for (let i = 0; i < 25_000; i++) filter.add(sha256(`secret ${i}`))
  const rate = falsePositiveRate(filter)
  assert.ok(rate < 0.001, `false positives at half capacity: ${(rate * 100).toFixed(3)}% (theory 0.02%)`)
})

test('full past its capacity; a hash added twice counts once; the floor; what is not a SHA-256 in hex', () => {
  const filter = new HashFilter(0)
  assert.equal(filter.capacity, MIN_CAPACITY, 'never smaller than the floor')
  const hash = sha256('twice')
  filter.add(hash)
  filter.add(hash)
  assert.equal(filter.count, 1)
  for (let i = 0; filter.count <= MIN_CAPACITY; i++) filter.add(sha256(`filling ${i}`))
  assert.equal(filter.full, true)

  const empty = new HashFilter(10)
  empty.add('not a hash')
  empty.add(sha256('x').toUpperCase())
  assert.equal(empty.count, 0, 'no presented secret can have such a hash: left out')
  assert.equal(empty.mayContain('not a hash'), false)
})
