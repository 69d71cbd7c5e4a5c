import {
  AUDIT_TIME_DETAILS,
  type AuditEntry,
  KeyConflictError,
  KeyInputError,
  KeyNotFoundError,
  type KeyUsage,
  type KeyView,
  type Revocation,
} from '../keys/administration.js'
import { readDateTime } from '../shared/date-time.js'
import { ApiError } from '../shared/errors.js'
import type { KeyTotals, UsageBucket } from '../usage/repository.js'
import { requestsOf } from '../usage/usage-history.js'
import type { AdminKey, AuditEntryJson, TopUsageEntryJson, UsageBucketJson } from './schemas.js'

/** The service's values (Unix ms) as the admin API writes them: RFC 3339 strings in UTC. */

const iso = (ms: number) => new Date(ms).toISOString()
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))

export function keyJson(view: KeyView): AdminKey {
  return {
    id: view.id,
    name: view.name,
    plan: view.plan,
    perMinute: view.perMinute,
    perDay: view.perDay,
    prefix: view.prefix,
    quotaId: view.quotaId,
    state: view.state,
    createdAt: iso(view.createdAt),
    updatedAt: iso(view.updatedAt),
    expiresAt: isoOrNull(view.expiresAt),
    revokedAt: isoOrNull(view.revokedAt),
    rotatedTo: view.rotatedTo,
    rotatedFrom: view.rotatedFrom,
    metadata: view.metadata,
    lastUsedAt: isoOrNull(view.lastUsedAt),
  }
}

/*
 * The answers of the admin API's key operations. The CLI's --json prints these same documents, so a
 * script reads one shape from either.
 */

export const createdKeyJson = (created: { key: string; view: KeyView }) => ({
  key: created.key,
  apiKey: keyJson(created.view),
})

export const rotatedKeyJson = (rotated: { key: string; view: KeyView; previous: KeyView }) => ({
  key: rotated.key,
  apiKey: keyJson(rotated.view),
  previous: keyJson(rotated.previous),
})

export const revokedKeyJson = (revoked: Revocation) => ({
  apiKey: keyJson(revoked.view),
  alreadyRevoked: revoked.alreadyRevoked,
  alsoRevoked: revoked.alsoRevoked.map(keyJson),
})

export const keyPageJson = (page: { keys: KeyView[]; nextAfter: string | null }) => ({
  data: page.keys.map(keyJson),
  nextAfter: page.nextAfter,
})

/** An admin token (never the token itself, nor its hash): the CLI's only; the admin API has none. */
export const adminTokenJson = (record: { id: string; name: string; prefix: string; createdAt: number; revokedAt: number | null }) => ({
  id: record.id,
  name: record.name,
  prefix: record.prefix,
  createdAt: iso(record.createdAt),
  revokedAt: isoOrNull(record.revokedAt),
})

export function usageJson(usage: KeyUsage) {
  const window = (w: KeyUsage['minute']) => ({ limit: w.limit, used: w.used, remaining: w.remaining, resetAt: iso(w.resetAt * 1000) })
  return {
    keyId: usage.keyId,
    quotaId: usage.quotaId,
    minute: window(usage.minute),
    day: window(usage.day),
    ban: { active: usage.ban.active, until: usage.ban.until === null ? null : iso(usage.ban.until * 1000), level: usage.ban.level },
    lastUsedAt: isoOrNull(usage.lastUsedAt),
  }
}

export const usageBucketJson = (bucket: UsageBucket): UsageBucketJson => ({ start: iso(bucket.start), ...bucket.counts })

export const topUsageJson = (totals: KeyTotals): TopUsageEntryJson => ({
  keyId: totals.keyId,
  name: totals.name,
  plan: totals.plan,
  requests: requestsOf(totals.counts),
  allowed: totals.counts.allowed,
  rateLimited: totals.counts.rateLimited,
  banned: totals.counts.banned,
})

export function auditJson(entry: AuditEntry): AuditEntryJson {
  return {
    seq: entry.seq,
    at: iso(entry.at),
    actor: entry.actor,
    action: entry.action,
    keyId: entry.keyId,
    details: detailsJson(entry.details),
    requestId: entry.requestId,
  }
}

/** An entry's details with its times (AUDIT_TIME_DETAILS) as RFC 3339; stored as Unix ms, in every row old or new. */
function detailsJson(details: Record<string, unknown>): Record<string, unknown> {
  const json = { ...details }
  for (const field of AUDIT_TIME_DETAILS) {
    const value = json[field]
    if (typeof value === 'number') json[field] = iso(value)
  }
  return json
}

/** An RFC 3339 time from a request -> Unix ms; null stays null (clears the expiry). */
export function parseTime(field: string, value: string | null | undefined): number | null | undefined {
  if (value === null || value === undefined) return value
  const reading = readDateTime(value)
  if ('ms' in reading) return reading.ms
  if (reading.problem === 'impossible')
    throw new ApiError('invalid_request', `${field} must be a date and time that exists (${reading.detail})`)
  throw new ApiError('invalid_request', `${field} must be an RFC 3339 date-time such as 2027-01-01T00:00:00Z`)
}

/**
 * Metadata is stored and returned as JSON: a number the body parser kept exact (a bigint above
 * 2^53) or refused to read as written (1.0, 1e3 become NaN: integers have one spelling) could not
 * come back as sent, so it is refused rather than altered.
 */
export function assertStorableJson(value: unknown, path: string): void {
  if (typeof value === 'bigint')
    throw new ApiError('invalid_request', `${path} is an integer beyond ±2^53, which JSON metadata cannot keep exactly`)
  if (typeof value === 'number' && !Number.isFinite(value))
    throw new ApiError('invalid_request', `${path} must be a number written in plain decimal (integers without a fraction or exponent)`)
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) assertStorableJson(item, `${path}[${i}]`)
  } else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) assertStorableJson(v, `${path}.${k}`)
}

/** The service's field names, where the admin API calls a field otherwise. */
const API_FIELD: Record<string, string> = { graceSeconds: 'gracePeriodSeconds' }

/** The service's refusals in the closed list: bad input is 400 naming the field, an unknown key 404, a key in the wrong state 409. */
export async function callService<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof KeyInputError) {
      const field = API_FIELD[error.field] ?? error.field
      const message = error.message.startsWith(error.field) ? field + error.message.slice(error.field.length) : `${field}: ${error.message}`
      throw new ApiError('invalid_request', message)
    }
    if (error instanceof KeyNotFoundError) throw new ApiError('not_found', `No key with id ${error.id}`)
    if (error instanceof KeyConflictError) throw new ApiError('conflict', error.message)
    throw error
  }
}
