import type { AdminTokenRecord, AdminTokenRole } from '../admin-tokens/admin-token-repository.js'

/** An admin_tokens row as both SQL stores return it (same column names in both migrations). */
export interface AdminTokenRow {
  id: string
  name: string
  hash: string
  prefix: string
  role: AdminTokenRole
  created_at: number
  revoked_at: number | null
}

export const toAdminTokenRecord = (r: AdminTokenRow): AdminTokenRecord => ({
  id: r.id,
  name: r.name,
  hash: r.hash,
  prefix: r.prefix,
  role: r.role,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
})
