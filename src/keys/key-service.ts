import type { Environment } from '../config.js'
import { type ApiKeyRecord, displayPrefix, generateKey, generateKeyId, hashKey } from './api-key.js'
import { isPlanName, MAX_CUSTOM_LIMIT, PLAN_QUOTAS, type PlanName } from './plans.js'
import type { KeyRepository } from './repository.js'

export class KeyInputError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'KeyInputError'
  }
}

export interface CreateKeyInput {
  plan: string
  name: string
  perMinute?: number
  perDay?: number
}

export interface NewKeySpec {
  plan: PlanName
  name: string
  perMinute: number
  perDay: number
}

/**
 * Checks a key request: a known plan, a name, and custom limits on Enterprise only (and required
 * there). Any two positive limits make a plan, also a day limit below the minute limit (a trial
 * key: 5 a day, no burst limit): the tightest window answers, as for every key.
 */
export function validateKeyInput(input: CreateKeyInput): NewKeySpec {
  if (!isPlanName(input.plan))
    throw new KeyInputError(`--plan must be one of free, pro, business, enterprise (got ${JSON.stringify(input.plan)})`)
  const name = input.name.trim()
  if (name === '' || name.length > 100) throw new KeyInputError('--name must be 1 to 100 characters')
  const custom = input.perMinute !== undefined || input.perDay !== undefined
  if (input.plan !== 'enterprise') {
    if (custom)
      throw new KeyInputError(`--per-minute and --per-day apply to the enterprise plan only; the ${input.plan} plan has fixed limits`)
    return { plan: input.plan, name, ...PLAN_QUOTAS[input.plan] }
  }
  const { perMinute, perDay } = input
  if (perMinute === undefined || perDay === undefined) throw new KeyInputError('the enterprise plan needs both --per-minute and --per-day')
  for (const [flag, value] of [
    ['--per-minute', perMinute],
    ['--per-day', perDay],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1 || value > MAX_CUSTOM_LIMIT) {
      throw new KeyInputError(`${flag} must be an integer from 1 to ${MAX_CUSTOM_LIMIT}`)
    }
  }
  return { plan: 'enterprise', name, perMinute, perDay }
}

function newRecord(spec: NewKeySpec, env: Environment, now: number): { key: string; record: ApiKeyRecord } {
  const key = generateKey(env)
  return {
    key,
    record: { id: generateKeyId(), ...spec, hash: hashKey(key), prefix: displayPrefix(key), createdAt: now, revokedAt: null },
  }
}

/** Creates a key; the plain key is returned once and never stored. */
export async function createApiKey(
  keys: KeyRepository,
  input: CreateKeyInput,
  env: Environment,
  now = Date.now(),
): Promise<{ key: string; record: ApiKeyRecord }> {
  const created = newRecord(validateKeyInput(input), env, now)
  await keys.insertKey(created.record)
  return created
}

/** On a first start with no key at all, creates one Free key so a newcomer can call the API at once. */
export async function createFirstKey(
  keys: KeyRepository,
  env: Environment,
  now = Date.now(),
): Promise<{ key: string; record: ApiKeyRecord } | undefined> {
  const created = newRecord({ plan: 'free', name: 'first key', ...PLAN_QUOTAS.free }, env, now)
  return (await keys.insertFirstKey(created.record)) ? created : undefined
}
