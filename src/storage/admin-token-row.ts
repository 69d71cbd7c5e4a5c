import type { AdminTokenRecord, AdminTokenRevocation, AdminTokenRole } from '../admin-tokens/admin-token-repository.js'
import { Named } from './order-sql.js'

/** An admin_tokens row as both SQL stores return it (same column names in both migrations). */
export interface AdminTokenRow {
  id: string
  name: string
  hash: string
  prefix: string
  role: AdminTokenRole
  created_by: string | null
  created_at: number
  revoked_at: number | null
}

export const ADMIN_TOKEN_COLUMNS = 'id, name, hash, prefix, role, created_by, created_at, revoked_at'

export const adminTokenValues = (t: AdminTokenRecord): unknown[] => [
  t.id,
  t.name,
  t.hash,
  t.prefix,
  t.role,
  t.createdBy,
  t.createdAt,
  t.revokedAt,
]

export const toAdminTokenRecord = (r: AdminTokenRow): AdminTokenRecord => ({
  id: r.id,
  name: r.name,
  hash: r.hash,
  prefix: r.prefix,
  role: r.role,
  createdBy: r.created_by,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
})

/**
 * A token and everything under it in the tree of makers, revoked or not (a revoked token's makes
 * are walked too: a repeat revocation finishes what an older version left), the token first, then
 * makers before what they made. The same text on both engines; `created_by` is indexed (migration
 * 016) and written once, so the walk ends.
 */
export const ADMIN_TOKEN_TREE = new Named(`
  WITH RECURSIVE tree (id, depth) AS (
    SELECT id, 0 FROM admin_tokens WHERE id = :id
    UNION ALL
    SELECT child.id, tree.depth + 1 FROM admin_tokens child JOIN tree ON child.created_by = tree.id
  )
  SELECT ${ADMIN_TOKEN_COLUMNS.replace(/\w+/g, 't.$&')} FROM tree JOIN admin_tokens t ON t.id = tree.id
   ORDER BY tree.depth, t.created_at, t.id`)

/** What revoking the first of `tree` (ADMIN_TOKEN_TREE's rows) at `at` does: the rows to change, and the outcome. */
export function revocationOf(tree: AdminTokenRow[], at: number): { changed: AdminTokenRecord[]; revocation: AdminTokenRevocation } {
  const [root, ...below] = tree.map(toAdminTokenRecord)
  const revokedNow = root!.revokedAt === null
  const alsoRevoked = below.filter((t) => t.revokedAt === null).map((t) => ({ ...t, revokedAt: at }))
  const record = revokedNow ? { ...root!, revokedAt: at } : root!
  return { changed: revokedNow ? [record, ...alsoRevoked] : alsoRevoked, revocation: { record, revokedNow, alsoRevoked } }
}
