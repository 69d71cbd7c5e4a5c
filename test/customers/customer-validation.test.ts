/** A customer's id and input rules (customers/), which the admin API and the CLI share. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CustomerRecord } from '../../src/customers/customer.js'
import { CUSTOMER_ID_PATTERN, generateCustomerId } from '../../src/customers/customer-id.js'
import { checkCustomerChange, checkListQuery, checkNewCustomer } from '../../src/customers/customer-validation.js'
import { PLAN_QUOTAS } from '../../src/shared/plans.js'
import { Refusal } from '../../src/shared/refusal.js'

const refused = (field: string) => (error: unknown) => error instanceof Refusal && error.kind === 'invalid' && error.field === field

test('customer ids are cus_ and 16 base62 characters, never the same twice', () => {
  const ids = Array.from({ length: 200 }, generateCustomerId)
  for (const id of ids) assert.match(id, new RegExp(CUSTOMER_ID_PATTERN))
  assert.equal(new Set(ids).size, ids.length)
})

test('a new customer: the fields checked in order (plan, name, limits, metadata), each refusal naming its field', () => {
  assert.deepEqual(checkNewCustomer({ name: ' Shop ', plan: 'pro' }), { name: 'Shop', plan: 'pro', ...PLAN_QUOTAS.pro, metadata: null })
  assert.throws(() => checkNewCustomer({ name: '', plan: 'gold' }), refused('plan'))
  assert.throws(() => checkNewCustomer({ name: '', plan: 'pro' }), refused('name'))
  assert.throws(() => checkNewCustomer({ name: 'Shop', plan: 'pro', perMinute: 5 }), refused('perMinute'))
  assert.throws(() => checkNewCustomer({ name: 'Shop', plan: 'enterprise', perMinute: 5 }), refused('perDay'))
  assert.throws(() => checkNewCustomer({ name: 'Shop', plan: 'pro', metadata: [] as never }), refused('metadata'))
})

test('a change: Enterprise limits are kept while the plan stays Enterprise; another plan takes its own', () => {
  const current: CustomerRecord = {
    id: generateCustomerId(),
    name: 'Big',
    plan: 'enterprise',
    perMinute: 5000,
    perDay: 9_000_000,
    metadata: { tier: 1 },
    createdAt: 0,
    updatedAt: 0,
  }
  assert.deepEqual(checkCustomerChange(current, { name: 'Bigger' }), {
    name: 'Bigger',
    plan: 'enterprise',
    perMinute: 5000,
    perDay: 9_000_000,
    metadata: { tier: 1 },
  })
  assert.deepEqual(checkCustomerChange(current, { perDay: 10 }), { ...checkCustomerChange(current, {}), perDay: 10 })
  assert.deepEqual(checkCustomerChange(current, { plan: 'free', metadata: null }), {
    name: 'Big',
    plan: 'free',
    ...PLAN_QUOTAS.free,
    metadata: null,
  })
  assert.throws(() => checkCustomerChange(current, { plan: 'free', perMinute: 1 }), refused('perMinute'))
})

test('a list: limit from 1 to 100 and a known plan', () => {
  checkListQuery({ limit: 100, plan: 'free' })
  for (const limit of [0, 101, 1.5]) assert.throws(() => checkListQuery({ limit }), refused('limit'))
  assert.throws(() => checkListQuery({ limit: 1, plan: 'gold' as never }), refused('plan'))
})
