/**
 * How the runnable examples of the docs are judged (test/system/docs/examples.ts), apart from the
 * server they run against: a JSON answer shown with some of its fields is wrong unless it says it
 * is shortened. The README's "complete" example showed an order without its createdAt and
 * expiresAt, and passed, since fields left out were never compared (issue 43).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { differences, type Example, parseShown, SHORTENED } from '../system/docs/examples.js'

const example = (...shown: string[]): Example => ({ where: 'README.md:1', command: 'curl …', shown })
const ORDER = {
  id: 1,
  petId: 1,
  status: 'completed',
  createdAt: '2026-11-21T12:00:30.000Z',
  expiresAt: '2026-11-21T12:30:30.000Z',
  endedAt: '2026-11-21T12:01:00.000Z',
}

test('a JSON answer shown with fewer fields than the answer has, not marked shortened, is a difference naming them', () => {
  const problems = differences(example('{"id":1,"petId":1,"status":"completed","endedAt":"…"}'), JSON.stringify(ORDER))
  assert.equal(problems.length, 1)
  assert.match(problems[0]!, /createdAt, expiresAt, not shown/)
  assert.deepEqual(
    differences(example('{"id":1,"petId":1,"status":"completed","createdAt":"…","expiresAt":"…","endedAt":"…"}'), JSON.stringify(ORDER)),
    [],
  )
})

test('an object ending with a bare … is shortened: the fields left out are not compared, the ones shown are', () => {
  assert.deepEqual(differences(example('{"id":1,"status":"completed",…}'), JSON.stringify(ORDER)), [])
  assert.deepEqual(differences(example('{…}'), JSON.stringify(ORDER)), [])
  assert.match(differences(example('{"status":"placed",…}'), JSON.stringify(ORDER))[0]!, /\$\.status: shown "placed"/)
  // Nested: each object says it for itself.
  const page = JSON.stringify({ data: [ORDER], nextAfter: null })
  assert.deepEqual(differences(example('{"data":[{"id":1,…}],"nextAfter":null}'), page), [])
  assert.match(differences(example('{"data":[{"id":1,…}],…}'), page).join(), /^$/)
  assert.match(differences(example('{"data":[{"id":1}],"nextAfter":null}'), page)[0]!, /\$\.data\[0\]: the answer has petId/)
  assert.match(differences(example('{"data":[{"id":1,…}]}'), page)[0]!, /\$: the answer has nextAfter/)
})

test('… inside a string is any text, not the mark; a bare … anywhere but an object’s end cannot be read', () => {
  assert.deepEqual(parseShown('{"key":"as_live_…","a":"x,…}"}'), { key: 'as_live_…', a: 'x,…}' })
  assert.deepEqual(parseShown('{"a":1, … }'), { a: 1, [SHORTENED]: true })
  assert.deepEqual(parseShown('{ … }'), { [SHORTENED]: true })
  assert.throws(() => parseShown('[1,…]'))
  assert.throws(() => parseShown('{"a":…,"b":1}'))
  assert.match(differences(example('{"a":…}'), '{"a":1}')[0]!, /cannot be read/)
})
