import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Refusal } from '../../src/shared/refusal.js'
import { HOUR_MS, MINUTE_MS, statusClassIndex } from '../../src/usage/counts.js'
import { bucketRange } from '../../src/usage/range.js'

const NOW = Date.UTC(2030, 0, 1, 10, 30, 15)

test('defaults: to is the start of the next bucket, from 60 minutes / 24 hours before it', () => {
  assert.deepEqual(bucketRange('minute', undefined, undefined, NOW), {
    granularity: 'minute',
    from: Date.UTC(2030, 0, 1, 9, 31),
    to: Date.UTC(2030, 0, 1, 10, 31),
  })
  assert.deepEqual(bucketRange('hour', undefined, undefined, NOW), {
    granularity: 'hour',
    from: Date.UTC(2029, 11, 31, 11),
    to: Date.UTC(2030, 0, 1, 11),
  })
})

test('from and to are truncated to their bucket', () => {
  const r = bucketRange('minute', NOW - 5 * MINUTE_MS, NOW, NOW)
  assert.equal(r.from, Date.UTC(2030, 0, 1, 10, 25))
  assert.equal(r.to, Date.UTC(2030, 0, 1, 10, 30))
})

test('at most 1440 minutes and 2160 hours; reversed or empty is refused naming the field', () => {
  assert.doesNotThrow(() => bucketRange('minute', NOW - 1440 * MINUTE_MS, NOW, NOW))
  assert.throws(
    () => bucketRange('minute', NOW - 1441 * MINUTE_MS, NOW, NOW),
    (e: unknown) => e instanceof Refusal && e.kind === 'invalid' && e.field === 'from' && /at most 1440/.test(e.message),
  )
  assert.doesNotThrow(() => bucketRange('hour', NOW - 2160 * HOUR_MS, NOW, NOW))
  assert.throws(
    () => bucketRange('hour', NOW - 2161 * HOUR_MS, NOW, NOW),
    (e: unknown) => e instanceof Refusal && e.kind === 'invalid' && e.field === 'from',
  )
  assert.deepEqual(
    bucketRange('minute', undefined, NOW - 86_400_000, NOW),
    { granularity: 'minute', from: Date.UTC(2029, 11, 31, 9, 30), to: Date.UTC(2029, 11, 31, 10, 30) },
    'to alone: from is 60 minutes before it',
  )
  assert.throws(
    () => bucketRange('minute', NOW, NOW - MINUTE_MS, NOW),
    (e: unknown) => e instanceof Refusal && e.kind === 'invalid' && e.field === 'from',
  )
  assert.throws(() => bucketRange('minute', NOW, NOW + 1, NOW), /earlier than to/, 'the same minute after truncation: empty')
})

test('status classes: 2xx, 4xx, 5xx; 1xx and 3xx have none', () => {
  assert.deepEqual([100, 200, 299, 304, 400, 429, 499, 500, 503].map(statusClassIndex), [-1, 3, 3, -1, 4, 4, 4, 5, 5])
})
