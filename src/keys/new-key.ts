import type { Environment } from '../config/config.js'
import { displayPrefix } from '../shared/key-redaction.js'
import type { PlanName } from '../shared/plans.js'
import { invalid } from '../shared/refusal.js'
import type { Scope } from '../shared/scopes.js'
import type { CreateKeyRequest, CustomerPlan } from './administration.js'
import { type ApiKeyRecord, generateKey, generateKeyId, hashKey } from './api-key.js'
import { checkExpiry, checkLimits, checkMetadata, checkName, checkPlan, checkScopes } from './key-validation.js'

/** What a new key's record is made of, checked: a creation's, a rotation's successor's, the first key's. */
export interface NewKeySpec {
  plan: PlanName
  name: string
  perMinute: number
  perDay: number
  expiresAt: number | null
  metadata: Record<string, unknown> | null
  customerId: string | null
  scopes: Scope[]
}

export function newRecord(spec: NewKeySpec, env: Environment, now: number, chain?: { quotaId: string; rotatedFrom: string }) {
  const key = generateKey(env)
  const id = generateKeyId()
  const record: ApiKeyRecord = {
    id,
    ...spec,
    hash: hashKey(key),
    prefix: displayPrefix(key),
    quotaId: chain?.quotaId ?? id,
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
    rotatedTo: null,
    rotatedFrom: chain?.rotatedFrom ?? null,
    lastUsedAt: null,
  }
  return { key, record }
}

/** A new key and its record, its input checked as createKey checks it; nothing is stored. The plain key is never kept. */
export function newKey(
  input: CreateKeyRequest,
  env: Environment,
  now: number,
  customer?: CustomerPlan,
): { key: string; record: ApiKeyRecord } {
  return newRecord(checkCreate(input, now, customer), env, now)
}

/** A key of a customer takes the customer's plan and limits: given ones are refused rather than ignored. */
export function refusePlanOfCustomer(input: Pick<CreateKeyRequest, 'plan' | 'perMinute' | 'perDay'>): void {
  const given =
    input.plan !== undefined ? 'plan' : input.perMinute !== undefined ? 'perMinute' : input.perDay !== undefined ? 'perDay' : undefined
  if (given !== undefined)
    throw invalid(given, (name) => `${name(given)}: a key of a customer takes the customer's plan and limits; change the customer instead`)
}

function checkCreate(input: CreateKeyRequest, now: number, customer?: CustomerPlan): NewKeySpec {
  const name = checkName(input.name)
  // A key of a customer has scopes of its own: the quota is the customer's, what each key may do is not.
  const common = {
    name,
    expiresAt: checkExpiry(input.expiresAt, now),
    metadata: checkMetadata(input.metadata),
    scopes: checkScopes(input.scopes),
  }
  if (customer !== undefined) {
    refusePlanOfCustomer(input)
    return { ...common, plan: customer.plan, perMinute: customer.perMinute, perDay: customer.perDay, customerId: customer.id }
  }
  const plan = checkPlan(input.plan)
  return { ...common, plan, ...checkLimits(plan, input.perMinute, input.perDay), customerId: null }
}
