/**
 * What a change entry with no details did, in words: its action says it all, and an empty cell
 * read as "nothing recorded". A revocation that took no other key of its chain has none (the
 * others' are `alsoRevoked`, `revokedWith`, `alreadyRevoked`, `leakUrl`).
 */
const WITHOUT_DETAILS: Partial<Record<string, string>> = {
  'key.revoke': 'revoked (no other key of its rotation chain was in its grace period)',
}

/** An entry's details in one line (never a secret: the API writes none), or what its action did when it has none. */
export function auditDetailText(entry: { action: string; details: Record<string, unknown> }): string {
  const fields = Object.entries(entry.details)
  if (fields.length === 0) return WITHOUT_DETAILS[entry.action] ?? '—'
  return fields.map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('; ')
}
