import assert from 'node:assert/strict'
import { test } from 'node:test'
import { customerChanges, customerForm, type EditedCustomer } from '../../console/src/customer-edit.js'

const ACME: EditedCustomer = {
  name: 'Acme',
  plan: 'pro',
  perMinute: 300,
  perDay: 10_000,
  metadata: { account: 'A-1' },
}

// Issue 43: the customer page had no way to change the customer. Its form sends what changed only.
test('customer form: unchanged sends nothing; each field that changed is sent, and only it', () => {
  const form = customerForm(ACME)
  assert.deepEqual(customerChanges(ACME, form), {})
  assert.deepEqual(customerChanges(ACME, { ...form, name: 'Acme Corp' }), { name: 'Acme Corp' })
  assert.deepEqual(customerChanges(ACME, { ...form, plan: 'business' }), { plan: 'business' })
  assert.deepEqual(customerChanges(ACME, { ...form, metadata: '' }), { metadata: null })
  assert.deepEqual(customerChanges(ACME, { ...form, metadata: '{"account":"A-2"}' }), { metadata: { account: 'A-2' } })
  // The limits of a plan that is not Enterprise are the plan's: typed ones are not sent.
  assert.deepEqual(customerChanges(ACME, { ...form, perMinute: '5' }), {})
})

test('customer form: becoming Enterprise sends both limits; on Enterprise, each limit that changed', () => {
  const form = customerForm(ACME)
  assert.deepEqual(customerChanges(ACME, { ...form, plan: 'enterprise', perMinute: '900', perDay: '90000' }), {
    plan: 'enterprise',
    perMinute: 900,
    perDay: 90_000,
  })
  const big = { ...ACME, plan: 'enterprise', perMinute: 900, perDay: 90_000 }
  assert.deepEqual(customerChanges(big, { ...customerForm(big), perDay: '100000' }), { perDay: 100_000 })
})

test('customer form: metadata that is not a JSON object is refused before anything is sent', () => {
  assert.throws(() => customerChanges(ACME, { ...customerForm(ACME), metadata: '{oops' }), /Metadata is not JSON/)
  assert.throws(() => customerChanges(ACME, { ...customerForm(ACME), metadata: '[1]' }), /Metadata is a JSON object/)
})
