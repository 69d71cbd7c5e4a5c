/**
 * What an admin token may do: `read` calls the admin API's reads only (GET and HEAD, and the
 * routes whose config says `adminRead: true`), `admin` everything. A closed list, as the CHECK of
 * migration 011 says; a token made without a role is `admin`.
 */
export const ADMIN_TOKEN_ROLES = ['read', 'admin'] as const
export type AdminTokenRole = (typeof ADMIN_TOKEN_ROLES)[number]
export const DEFAULT_ADMIN_TOKEN_ROLE: AdminTokenRole = 'admin'
export const isAdminTokenRole = (role: string): role is AdminTokenRole => (ADMIN_TOKEN_ROLES as readonly string[]).includes(role)

/** An admin token as stored: only its SHA-256 and a display prefix (`as_admin_AbCd`). */
export interface AdminTokenRecord {
  id: string
  name: string
  hash: string
  prefix: string
  role: AdminTokenRole
  createdAt: number
  revokedAt: number | null
}

/** Storage of admin tokens (`Storage.adminTokens`). An API key is never an admin token: other prefix, other table. */
export interface AdminTokenRepository {
  insert(record: AdminTokenRecord): Promise<void>
  findByHash(hash: string): Promise<AdminTokenRecord | undefined>
  list(): Promise<AdminTokenRecord[]>
  /** True when the token existed and was not already revoked. */
  revoke(id: string, at: number): Promise<boolean>
}
