import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { generateKey, hashKey, isWellFormedKey } from '../../src/keys/api-key.js'
import { checkLimits, checkName, checkPlan } from '../../src/keys/key-validation.js'
import { displayPrefix } from '../../src/shared/key-redaction.js'
import { Refusal } from '../../src/shared/refusal.js'

function validateKeyInput(input: { plan: string; name: string; perMinute?: number; perDay?: number }) {
  const plan = checkPlan(input.plan)
  return { plan, name: checkName(input.name), ...checkLimits(plan, input.perMinute, input.perDay) }
}

test('keys carry the environment prefix, 38 base62 characters and a valid checksum', () => {
  const live = generateKey('production')
  const test_ = generateKey('staging')
  assert.match(live, /^as_live_[0-9A-Za-z]{38}$/)
  assert.match(test_, /^as_test_[0-9A-Za-z]{38}$/)
  assert.ok(isWellFormedKey(live, 'production'))
  assert.ok(!isWellFormedKey(live, 'staging'), 'a live key is not accepted in staging')
  assert.ok(isWellFormedKey(test_, 'staging'))
  assert.equal(new Set(Array.from({ length: 1000 }, () => generateKey('production'))).size, 1000)
})

test('any single-character change breaks the checksum', () => {
  const key = generateKey('production')
  const chars = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  fc.assert(
    fc.property(fc.integer({ min: 8, max: key.length - 1 }), fc.constantFrom(...chars), (i, c) => {
      fc.pre(key[i] !== c)
      return !isWellFormedKey(key.slice(0, i) + c + key.slice(i + 1), 'production')
    }),
  )
})

test('only a SHA-256 hash and a short display prefix are derived for storage', () => {
  const key = generateKey('production')
  assert.match(hashKey(key), /^[0-9a-f]{64}$/)
  assert.equal(displayPrefix(key), key.slice(0, 12))
  assert.equal(hashKey(key).includes(key.slice(8, 20)), false)
})

test('plan rules: custom limits on enterprise only, and required there', () => {
  assert.deepEqual(validateKeyInput({ plan: 'free', name: 'a' }), { plan: 'free', name: 'a', perMinute: 60, perDay: 1000 })
  assert.deepEqual(validateKeyInput({ plan: 'pro', name: 'a' }), { plan: 'pro', name: 'a', perMinute: 300, perDay: 10_000 })
  assert.deepEqual(validateKeyInput({ plan: 'business', name: 'a' }), { plan: 'business', name: 'a', perMinute: 1000, perDay: 100_000 })
  assert.deepEqual(validateKeyInput({ plan: 'enterprise', name: 'a', perMinute: 5000, perDay: 1_000_000 }), {
    plan: 'enterprise',
    name: 'a',
    perMinute: 5000,
    perDay: 1_000_000,
  })
  // A day limit below the minute limit is a plan too (a trial key: 5 a day, no burst limit).
  assert.deepEqual(validateKeyInput({ plan: 'enterprise', name: 'trial', perMinute: 1000, perDay: 5 }), {
    plan: 'enterprise',
    name: 'trial',
    perMinute: 1000,
    perDay: 5,
  })
  const bad = [
    { plan: 'free', name: 'a', perMinute: 10 },
    { plan: 'pro', name: 'a', perMinute: 1000, perDay: 5 },
    { plan: 'enterprise', name: 'a' },
    { plan: 'enterprise', name: 'a', perMinute: 1000 },
    { plan: 'enterprise', name: 'a', perMinute: 0, perDay: 5 },
    { plan: 'enterprise', name: 'a', perMinute: 10, perDay: 0 },
    { plan: 'enterprise', name: 'a', perMinute: -1, perDay: 5 },
    { plan: 'enterprise', name: 'a', perMinute: 1.5, perDay: 5 },
    { plan: 'enterprise', name: 'a', perMinute: 10, perDay: 2_000_000_000 },
    { plan: 'gold', name: 'a' },
    { plan: 'free', name: ' ' },
  ]
  for (const input of bad) assert.throws(() => validateKeyInput(input), Refusal, JSON.stringify(input))
})
