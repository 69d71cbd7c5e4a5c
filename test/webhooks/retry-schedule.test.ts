/**
 * What an attempt's answer means (src/webhooks/retries.ts): the schedule's waits in order, each
 * jittered by at most ±10%, none after the last; a 2xx delivers, a 410 gives up and disables, any
 * other answer or none is retried, or given up after the schedule's last wait.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type AttemptResult, decideOutcome, RETRY_JITTER, retryWait } from '../../src/webhooks/retries.js'

const SCHEDULE = [5_000, 300_000, 1_800_000]

test('the wait after attempt n is the schedule’s nth, within ±10%; none after the last', () => {
  assert.equal(RETRY_JITTER, 0.1)
  assert.equal(
    retryWait(SCHEDULE, 1, () => 0.5),
    5_000,
  )
  assert.equal(
    retryWait(SCHEDULE, 1, () => 0),
    4_500,
  )
  assert.equal(
    retryWait(SCHEDULE, 1, () => 0.999_999),
    5_500,
  )
  assert.equal(
    retryWait(SCHEDULE, 2, () => 0.5),
    300_000,
  )
  assert.equal(
    retryWait(SCHEDULE, 3, () => 0.5),
    1_800_000,
  )
  assert.equal(
    retryWait(SCHEDULE, 4, () => 0.5),
    undefined,
  )
  const waits = Array.from({ length: 2000 }, () => retryWait(SCHEDULE, 1)!)
  assert.ok(
    waits.every((w) => w >= 4_500 && w <= 5_500),
    'within the jitter',
  )
  assert.ok(new Set(waits).size > 100, 'and jittered')
  assert.equal(
    retryWait([1], 1, () => 0),
    1,
    'never below 1 ms',
  )
})

const result = (statusCode: number | null, error: string | null = null): AttemptResult => ({
  statusCode,
  durationMs: 12,
  error,
  responseExcerpt: null,
})
const rules = { scheduleMs: SCHEDULE, disableAfterMs: 5 * 86_400_000, random: () => 0.5 }
const NOW = Date.UTC(2026, 10, 29, 12)

test('a 2xx delivers and clears the endpoint’s failing; a 410 gives up and disables it', () => {
  for (const status of [200, 201, 204, 299])
    assert.deepEqual(decideOutcome(result(status), 1, NOW, rules), {
      next: { status: 'delivered', nextAttemptAt: null },
      effect: { kind: 'succeeded' },
    })
  assert.deepEqual(decideOutcome(result(410), 1, NOW, rules), { next: { status: 'failed', nextAttemptAt: null }, effect: { kind: 'gone' } })
})

test('any other answer, a redirect, a timeout or a network error is retried after the schedule’s wait, then given up', () => {
  const failedEffect = { kind: 'failed', disableIfFailingSince: NOW - 5 * 86_400_000 }
  for (const failed of [
    result(500),
    result(404),
    result(302, 'redirect not followed'),
    result(199),
    result(null, 'timed out after 10000 ms'),
  ]) {
    assert.deepEqual(decideOutcome(failed, 1, NOW, rules), {
      next: { status: 'pending', nextAttemptAt: NOW + 5_000 },
      effect: failedEffect,
    })
    assert.deepEqual(decideOutcome(failed, 3, NOW, rules), {
      next: { status: 'pending', nextAttemptAt: NOW + 1_800_000 },
      effect: failedEffect,
    })
    assert.deepEqual(decideOutcome(failed, 4, NOW, rules), { next: { status: 'failed', nextAttemptAt: null }, effect: failedEffect })
  }
})
