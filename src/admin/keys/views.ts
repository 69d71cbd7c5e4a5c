import type { KeyUsage, KeyView, Revocation } from '../../keys/administration.js'
import { keyDocument } from '../../keys/key-document.js'
import { ApiError } from '../../shared/errors.js'
import { iso, isoOrNull } from '../common/views.js'
import type { AdminKey } from './schemas.js'

/** A key as the admin API shows it: keys/key-document.ts, which the key events' data shares. */
export const keyJson = (view: KeyView): AdminKey => keyDocument(view)

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
