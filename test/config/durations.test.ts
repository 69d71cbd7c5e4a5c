/**
 * Durations as the variables write them (src/config/durations.ts), and the webhook delivery's
 * variables that take them: WEBHOOK_RETRY_SCHEDULE (a list, in order), WEBHOOK_DISABLE_AFTER; a
 * bad value stops the start naming the variable and the item at fault.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../../src/config/config.js'
import { durationListProblem, parseDuration, parseDurationList } from '../../src/config/durations.js'
import { ConfigError } from '../../src/shared/startup-error.js'

test('a duration is a whole number and its unit, in ms', () => {
  assert.equal(parseDuration('50ms'), 50)
  assert.equal(parseDuration('5s'), 5_000)
  assert.equal(parseDuration('30m'), 1_800_000)
  assert.equal(parseDuration('2h'), 7_200_000)
  assert.equal(parseDuration('5d'), 432_000_000)
  assert.equal(parseDuration(' 10h '), 36_000_000)
  for (const bad of ['5', 's', '1.5s', '-5s', '5 s', '5sec', '5S', '', '0x10s']) assert.equal(parseDuration(bad), undefined, bad)
})

test('a list is read in its order; each item is checked, the one at fault named', () => {
  assert.deepEqual(parseDurationList('5s,5m,30m,2h,5h,10h,10h'), [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
  assert.deepEqual(parseDurationList('50ms, 50ms'), [50, 50])
  assert.equal(durationListProblem('1s,2s', 20, 1, 1000, 'up to 1s'), 'must list durations up to 1s (got "2s")')
  assert.match(durationListProblem('1s,,2s', 20, 1, 10_000, 'x') ?? '', /got ""/)
  assert.match(durationListProblem('1s,2', 20, 1, 10_000, 'x') ?? '', /comma-separated list of durations.*got "2"/)
  assert.match(durationListProblem(Array(21).fill('1s').join(','), 20, 1, 10_000, 'x') ?? '', /at most 20 durations \(got 21\)/)
  assert.equal(durationListProblem('1s,2s', 20, 1, 10_000, 'x'), undefined)
})

test('WEBHOOK_RETRY_SCHEDULE and WEBHOOK_DISABLE_AFTER: Svix-like defaults, any schedule given, refused naming the variable', () => {
  const defaults = loadConfig({})
  assert.deepEqual(defaults.webhookRetryScheduleMs, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
  assert.equal(defaults.webhookDisableAfterMs, 5 * 86_400_000)
  assert.equal(defaults.webhookTimeoutMs, 10_000)
  assert.equal(defaults.webhookConcurrency, 10)
  const given = loadConfig({ WEBHOOK_RETRY_SCHEDULE: '50ms,50ms', WEBHOOK_DISABLE_AFTER: '90s' })
  assert.deepEqual(given.webhookRetryScheduleMs, [50, 50])
  assert.equal(given.webhookDisableAfterMs, 90_000)
  const cases: [Record<string, string>, RegExp][] = [
    [{ WEBHOOK_RETRY_SCHEDULE: '5s,soon' }, /^WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of durations.*\(got "soon"\)$/],
    [{ WEBHOOK_RETRY_SCHEDULE: '5s,8d' }, /^WEBHOOK_RETRY_SCHEDULE must list durations from 1ms to 7d \(got "8d"\)$/],
    [{ WEBHOOK_RETRY_SCHEDULE: '0ms' }, /^WEBHOOK_RETRY_SCHEDULE must list durations from 1ms to 7d/],
    [{ WEBHOOK_DISABLE_AFTER: '5' }, /^WEBHOOK_DISABLE_AFTER must be a whole number and a unit/],
    [{ WEBHOOK_DISABLE_AFTER: '500ms' }, /^WEBHOOK_DISABLE_AFTER must be from 1s to 365d/],
    [{ WEBHOOK_TIMEOUT_MS: '10s' }, /^WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000/],
    [{ WEBHOOK_CONCURRENCY: '0' }, /^WEBHOOK_CONCURRENCY must be an integer from 1 to 100/],
  ]
  for (const [env, message] of cases)
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      JSON.stringify(env),
    )
})
