import {
  CONTROL_CHARACTERS_REFUSED,
  findNul,
  hasControlCharacter,
  hiddenCharacterRefusal,
  NUL_IN_FIELD_NAME_REFUSED,
  NUL_REFUSED,
} from '../shared/control-characters.js'
import { isPlanName, MAX_CUSTOM_LIMIT, PLAN_NAMES, PLAN_QUOTAS, type PlanName, type Quota } from '../shared/plans.js'
import { invalid } from '../shared/refusal.js'
import { ALL_SCOPES, isScope, normalizeScopes, SCOPES, type Scope } from '../shared/scopes.js'
import { MAX_GRACE_SECONDS, MAX_METADATA_BYTES } from './administration.js'

/**
 * The rules of key input, once, for the CLI and the admin API alike. Each refusal names its fields
 * through the front end's namer: the HTTP API's (`perMinute`), the CLI's flags (`--per-minute`).
 */

export const MAX_NAME_LENGTH = 100

export function checkPlan(raw: unknown): PlanName {
  if (typeof raw !== 'string' || !isPlanName(raw))
    throw invalid('plan', (name) => `${name('plan')} must be one of ${PLAN_NAMES.join(', ')} (got ${JSON.stringify(raw)})`)
  return raw
}

export function checkName(raw: unknown): string {
  const name = typeof raw === 'string' ? raw.trim() : ''
  if (name === '' || name.length > MAX_NAME_LENGTH) throw invalid('name', (f) => `${f('name')} must be 1 to ${MAX_NAME_LENGTH} characters`)
  // Checked before trimming too: the admin API's schema refuses a trailing newline, so does the CLI.
  if (hasControlCharacter(raw as string)) throw invalid('name', (f) => `${f('name')} ${CONTROL_CHARACTERS_REFUSED}`)
  // Shown in the console and on terminals: `\u202eevil` would read "live" there (see docs/keys.md).
  const hidden = hiddenCharacterRefusal(raw as string)
  if (hidden !== undefined) throw invalid('name', (f) => `${f('name')} ${hidden}`)
  return name
}

function checkLimit(field: 'perMinute' | 'perDay', value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_CUSTOM_LIMIT)
    throw invalid(field, (name) => `${name(field)} must be an integer from 1 to ${MAX_CUSTOM_LIMIT}`)
  return value
}

/**
 * The limits of a key on `plan`: the plan's own, or on Enterprise the custom ones, which are then
 * required (both). Any two positive limits make a plan, also a day limit below the minute limit
 * (a trial key: 5 a day, no burst limit): the tightest window answers, as for every key.
 */
export function checkLimits(plan: PlanName, perMinute: number | undefined, perDay: number | undefined): Quota {
  if (plan !== 'enterprise') {
    const given = perMinute !== undefined ? 'perMinute' : perDay !== undefined ? 'perDay' : undefined
    if (given !== undefined)
      throw invalid(given, (name) => `${name(given)} applies to the enterprise plan only; the ${plan} plan has fixed limits`)
    return { ...PLAN_QUOTAS[plan] }
  }
  const missing = perMinute === undefined ? 'perMinute' : perDay === undefined ? 'perDay' : undefined
  if (missing !== undefined)
    throw invalid(missing, (name) => `${name(missing)}: the enterprise plan needs both ${name('perMinute')} and ${name('perDay')}`)
  return { perMinute: checkLimit('perMinute', perMinute), perDay: checkLimit('perDay', perDay) }
}

/** An expiry (ms) strictly after `now`, or null for none. */
export function checkExpiry(raw: unknown, now: number): number | null {
  if (raw === null || raw === undefined) return null
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw))
    throw invalid('expiresAt', (name) => `${name('expiresAt')} must be a date and time`)
  if (raw <= now) throw invalid('expiresAt', (name) => `${name('expiresAt')} must be in the future (got ${new Date(raw).toISOString()})`)
  return raw
}

/** A plain JSON object of at most MAX_METADATA_BYTES as UTF-8 JSON, or null for none. */
export function checkMetadata(raw: unknown): Record<string, unknown> | null {
  if (raw === null || raw === undefined) return null
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('metadata', (name) => `${name('metadata')} must be a JSON object`)
  // The admin API refuses a NUL before it gets here (http/validation.ts); the CLI's --metadata does not.
  const nul = findNul(raw)[0]
  if (nul !== undefined)
    // A path into the value, the same words for every front end.
    throw invalid('metadata', () =>
      nul.inKey
        ? `${['metadata', ...nul.path.slice(0, -1)].join('.')} ${NUL_IN_FIELD_NAME_REFUSED}`
        : `${['metadata', ...nul.path].join('.')} ${NUL_REFUSED}`,
    )
  const bytes = Buffer.byteLength(JSON.stringify(raw), 'utf8')
  if (bytes > MAX_METADATA_BYTES)
    throw invalid('metadata', (name) => `${name('metadata')} must be at most ${MAX_METADATA_BYTES} bytes as JSON (got ${bytes})`)
  return raw as Record<string, unknown>
}

export function checkGrace(raw: unknown): number {
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0 || raw > MAX_GRACE_SECONDS)
    throw invalid(
      'gracePeriodSeconds',
      (name) => `${name('gracePeriodSeconds')} must be an integer from 0 to ${MAX_GRACE_SECONDS} (7 days)`,
    )
  return raw
}

/**
 * A key's scopes: at least one (a key that may do nothing is a mistake, not a choice: revoke it),
 * each from the closed list and named once; every scope when none are given. Stored and shown in
 * the list's order whatever the order sent.
 */
export function checkScopes(raw: unknown): Scope[] {
  if (raw === undefined) return [...ALL_SCOPES]
  if (!Array.isArray(raw)) throw invalid('scopes', (name) => `${name('scopes')} must be an array of scopes`)
  if (raw.length === 0) throw invalid('scopes', (name) => `${name('scopes')} must name at least one of ${SCOPES.join(', ')}`)
  const unknown = raw.find((s) => !isScope(s))
  if (unknown !== undefined)
    throw invalid('scopes', (name) => `${name('scopes')}: ${JSON.stringify(unknown)} is not a scope; the scopes are ${SCOPES.join(', ')}`)
  if (new Set(raw).size !== raw.length) throw invalid('scopes', (name) => `${name('scopes')}: each scope may be named once`)
  return normalizeScopes(raw as Scope[])
}
