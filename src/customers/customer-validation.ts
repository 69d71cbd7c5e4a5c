import { checkLimits, checkMetadata, checkName, checkPlan } from '../keys/key-validation.js'
import { invalid } from '../shared/refusal.js'
import type { CreateCustomerRequest, CustomerRecord, ListCustomersQuery, UpdateCustomerRequest } from './customer.js'

/**
 * The rules of a customer's input, for the admin API and the CLI alike. Its fields follow a key's
 * rules (keys/key-validation.ts: name, plan, Enterprise limits, metadata), checked in that order;
 * each refusal names the field (an `invalid` refusal: 400 on the admin API, the flag on the CLI).
 */

export type CustomerFields = Pick<CustomerRecord, 'name' | 'plan' | 'perMinute' | 'perDay' | 'metadata'>

export function checkNewCustomer(input: CreateCustomerRequest): CustomerFields {
  const plan = checkPlan(input.plan)
  return {
    name: checkName(input.name),
    plan,
    ...checkLimits(plan, input.perMinute, input.perDay),
    metadata: checkMetadata(input.metadata),
  }
}

/** `current` with `patch` applied: as a key's, staying on Enterprise keeps its limits, another plan takes the plan's. */
export function checkCustomerChange(current: CustomerRecord, patch: UpdateCustomerRequest): CustomerFields {
  const plan = patch.plan === undefined ? current.plan : checkPlan(patch.plan)
  const keep = plan === 'enterprise' && current.plan === 'enterprise'
  return {
    name: patch.name === undefined ? current.name : checkName(patch.name),
    plan,
    ...checkLimits(plan, patch.perMinute ?? (keep ? current.perMinute : undefined), patch.perDay ?? (keep ? current.perDay : undefined)),
    metadata: patch.metadata === undefined ? current.metadata : checkMetadata(patch.metadata),
  }
}

export function checkListQuery(query: ListCustomersQuery): void {
  const limit = query.limit
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100)
    throw invalid('limit', (name) => `${name('limit')} must be an integer from 1 to 100`)
  if (query.plan !== undefined) checkPlan(query.plan)
}
