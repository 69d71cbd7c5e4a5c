import type { RecordedChange } from '../changes/audit-log.js'
import type { PlanName } from '../shared/plans.js'
import type { Scope } from '../shared/scopes.js'
import type { KeyState } from './administration.js'
import type { ApiKeyRecord } from './api-key.js'

export interface KeyChangeBatch {
  /** Opaque position to pass to the next call. */
  cursor: number
  /**
   * Hashes of the secrets created or changed after the previous cursor: API keys created (also a
   * rotation's successor), updated, rotated, revoked; admin tokens created, revoked.
   */
  hashes: string[]
}

export interface KeyPageFilter {
  plan?: PlanName
  customerId?: string
  state?: KeyState
  name?: string
  /** The display prefix, exactly. */
  prefix?: string
  /** Rows to return (the caller asks for one more than a page to know whether another follows). */
  limit: number
  /** The id of the last key of the previous page. */
  after?: string
  /** What `expired` means: expires_at at or before this time. */
  now: number
}

/** The mutable fields of a key, as the service computed them. */
export interface KeyUpdate {
  name: string
  plan: PlanName
  perMinute: number
  perDay: number
  expiresAt: number | null
  metadata: Record<string, unknown> | null
  scopes: Scope[]
  updatedAt: number
}

/** What an update wrote. */
export interface KeyUpdated {
  record: ApiKeyRecord
  /** The hashes of the other keys of its quota (its rotation chain) that took its plan, limits or scopes. */
  chain: string[]
}

export interface KeyRotation {
  /** The key rotated away from. */
  id: string
  /** Its updatedAt as read: the rotation applies only if nothing changed it since. */
  expectedUpdatedAt: number
  successor: ApiKeyRecord
  /** The old key's new expiry (end of the grace period), or null when it is revoked at once. */
  expiresAt: number | null
  revokedAt: number | null
  at: number
}

/** What a revocation revoked (keys/key-service.ts says which keys a revocation takes). */
export interface KeyRevocation {
  /** The key named was revoked now (false: it was revoked already, or there is no such key). */
  revoked: boolean
  /** The other keys of its rotation chain (its quota) that were in their grace period, revoked now, as they are after it. */
  graces: ApiKeyRecord[]
}

/**
 * Storage of API keys (hashes only, never the keys themselves). Every mutation writes the change,
 * its change-log rows and what it records (`recorded`: its audit entries, changes/), if anything, in
 * one transaction: all or nothing.
 */
export interface KeyRepository {
  insertKey(record: ApiKeyRecord, recorded?: RecordedChange): Promise<void>
  /** Inserts the record (and what it records) only when no key exists at all; atomic across processes. True when inserted. */
  insertFirstKey(record: ApiKeyRecord, recorded?: RecordedChange): Promise<boolean>
  /** Includes revoked keys (revokedAt set). */
  findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>
  findKeyById(id: string): Promise<ApiKeyRecord | undefined>
  /** Every key, oldest first. */
  listKeys(): Promise<ApiKeyRecord[]>
  /** Up to `limit` keys, newest first (created_at, then id, descending), after key `after` in that order, filtered in SQL. */
  pageKeys(filter: KeyPageFilter): Promise<ApiKeyRecord[]>
  /**
   * Writes `update` to key `id` if it is neither revoked nor rotated and still has updatedAt
   * `expectedUpdatedAt` (optimistic concurrency); plan, limits and scopes go to every unrevoked key
   * of its quota too (the keys it was rotated from, in their grace period), with their change-log
   * rows. Returns what it wrote, or undefined when the condition failed (nothing written).
   */
  updateKey(id: string, expectedUpdatedAt: number, update: KeyUpdate, recorded: RecordedChange): Promise<KeyUpdated | undefined>
  /** Inserts the successor and retires the old key; false (nothing written) when the old key changed meanwhile. */
  rotateKey(rotation: KeyRotation, recorded: RecordedChange): Promise<boolean>
  /**
   * Revokes key `id` (unless it is revoked already) and every other key of its quota still in its
   * grace period at `at` (rotated, not revoked, expiring after `at`), with their change-log rows and
   * what `recorded` makes of the revocation, in one transaction. `recorded` is called whatever was
   * revoked (a repeated revoke is on record too: the caller decides what it records of one).
   */
  revokeKey(id: string, at: number, recorded?: (revocation: KeyRevocation) => RecordedChange): Promise<KeyRevocation>
  /** Records last-use times (key id -> ms) in one statement or transaction; never moves a time back. */
  recordLastUsed(times: ReadonlyMap<string, number>): Promise<void>
  /** Secrets created or changed after `cursor` (null: the current position, with no hashes). */
  changesSince(cursor: number | null): Promise<KeyChangeBatch>
  /**
   * The hash of every API key and admin token, revoked ones included, comma-separated, in one
   * query: the filter of known secrets (keys/known-secrets.ts) is built from it. One string
   * rather than a row per secret: a million keys are one string of 65 MB, not a million objects.
   */
  secretHashes(): Promise<string>
  /**
   * Optional push channel: calls `listener` with the hash of each secret created or changed from
   * now on, in any process, moments after the change commits. Best effort (messages sent while the
   * channel is reconnecting are lost), so callers keep polling `changesSince` as well. Resolves to
   * an unsubscribe function.
   */
  watchChanges?(listener: (hash: string) => void): Promise<() => Promise<void>>
}
