import type { RecordedChange } from '../changes/audit-log.js'

/**
 * What an admin token may do: `read` calls the admin API's reads only (GET and HEAD, and the
 * routes whose config says `adminRead: true`), `admin` everything. A closed list, as the CHECK of
 * migration 011 says, from the least to the most a role may do (`withinRole` reads the order); a
 * token made without a role is `admin`.
 */
export const ADMIN_TOKEN_ROLES = ['read', 'admin'] as const
export type AdminTokenRole = (typeof ADMIN_TOKEN_ROLES)[number]
export const DEFAULT_ADMIN_TOKEN_ROLE: AdminTokenRole = 'admin'
export const isAdminTokenRole = (role: string): role is AdminTokenRole => (ADMIN_TOKEN_ROLES as readonly string[]).includes(role)

/**
 * Whether `role` may do no more than `ceiling`: a token makes tokens of its own role or below,
 * never above (Vault's rule: a child token's policies are a subset of its parent's). The stores
 * apply it again in the transaction of the insert.
 */
export const withinRole = (role: AdminTokenRole, ceiling: AdminTokenRole): boolean =>
  ADMIN_TOKEN_ROLES.indexOf(role) <= ADMIN_TOKEN_ROLES.indexOf(ceiling)

/** An admin token as stored: only its SHA-256 and a display prefix (`as_admin_AbCd`). */
export interface AdminTokenRecord {
  id: string
  name: string
  hash: string
  prefix: string
  role: AdminTokenRole
  /**
   * The admin token that made this one (through the admin API), or null: made by the CLI, by an
   * operator with the database. Written once: the tokens form a tree whose roots the CLI made.
   */
  createdBy: string | null
  createdAt: number
  revokedAt: number | null
}

/**
 * An insert's outcome: a token made by another one (`createdBy`) is inserted only while its maker
 * is active and may make its role (`withinRole`), checked in the insert's own transaction, after
 * every revocation of the maker that committed before it: a revocation either comes first (the
 * insert is refused) or sees the new token and revokes it too.
 */
export type AdminTokenInsert = 'inserted' | 'maker_revoked' | 'above_maker'

/** What a revocation did, in one transaction. */
export interface AdminTokenRevocation {
  /** The token named, as it is now (its first revocation time, when it was revoked before). */
  record: AdminTokenRecord
  /** False when it was revoked before: nothing of it changed (what it made is revoked all the same). */
  revokedNow: boolean
  /** The active tokens it made, or that they made, and so on, revoked now with it: makers before what they made. */
  alsoRevoked: AdminTokenRecord[]
}

/** Storage of admin tokens (`Storage.adminTokens`). An API key is never an admin token: other prefix, other table. */
export interface AdminTokenRepository {
  /** The token, its change-log row and what it records (its audit entry), if anything, in one transaction (see AdminTokenInsert). */
  insert(record: AdminTokenRecord, recorded?: RecordedChange): Promise<AdminTokenInsert>
  findByHash(hash: string): Promise<AdminTokenRecord | undefined>
  list(): Promise<AdminTokenRecord[]>
  /**
   * Revokes the token and every token under it in the tree of makers (the tokens it made, the ones
   * they made, …) that is still active: every server refuses them all, through the change log. With
   * what `recorded` makes of it (a repeat too), in one transaction. Undefined when no token has this id.
   */
  revoke(id: string, at: number, recorded?: (revocation: AdminTokenRevocation) => RecordedChange): Promise<AdminTokenRevocation | undefined>
}
