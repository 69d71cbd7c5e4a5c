import type { KeyView } from './administration.js'
import { countedQuotaId } from './api-key.js'

const iso = (ms: number) => new Date(ms).toISOString()
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))

/**
 * A key as the admin API shows it (its AdminKey schema): never the secret, only its prefix. The
 * admin API's answers and the key events' `data` (events/) are this one document, so a
 * subscriber reads the shape an operator reads.
 */
export function keyDocument(view: KeyView) {
  return {
    id: view.id,
    name: view.name,
    plan: view.plan,
    perMinute: view.perMinute,
    perDay: view.perDay,
    prefix: view.prefix,
    quotaId: countedQuotaId(view),
    customerId: view.customerId,
    scopes: view.scopes,
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
