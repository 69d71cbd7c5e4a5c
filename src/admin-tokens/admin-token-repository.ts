/** An admin token as stored: only its SHA-256 and a display prefix (`as_admin_AbCd`). */
export interface AdminTokenRecord {
  id: string
  name: string
  hash: string
  prefix: string
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
