import { conflict } from '../shared/refusal.js'
import { SCOPES } from '../shared/scopes.js'
import type { ApiKeyRecord } from './api-key.js'

/* What the key service derives from a record: whether it takes changes, what changed, what the audit log keeps of it. */

/** A revoked key, or one already rotated away from, takes no more changes. */
export function refuseRetired(record: ApiKeyRecord, what: 'updated' | 'rotated'): void {
  if (record.revokedAt !== null) throw conflict(`key ${record.id} is revoked; a revoked key cannot be ${what}`)
  if (record.rotatedTo !== null) throw conflict(`key ${record.id} was rotated to ${record.rotatedTo}; change that key instead`)
}

const FIELDS = ['name', 'plan', 'perMinute', 'perDay', 'expiresAt', 'metadata', 'scopes'] as const

export function changedFields(a: Pick<ApiKeyRecord, (typeof FIELDS)[number]>, b: Pick<ApiKeyRecord, (typeof FIELDS)[number]>): string[] {
  return FIELDS.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]))
}

/** What the audit log keeps of a key: never its secret, its hash, nor its metadata (which may be personal). */
export function describe(
  r: Pick<ApiKeyRecord, 'name' | 'plan' | 'perMinute' | 'perDay' | 'expiresAt' | 'scopes'>,
  changed: readonly string[] = [],
): Record<string, unknown> {
  // Scopes only when they say something: a key limited to some, or a change of them (as a
  // creation names its customer only when it has one); all four is every key's default.
  const scopes = changed.includes('scopes') || r.scopes.length < SCOPES.length ? { scopes: r.scopes } : {}
  return { name: r.name, plan: r.plan, perMinute: r.perMinute, perDay: r.perDay, expiresAt: r.expiresAt, ...scopes }
}
