import type { ApiKeyRecord } from './api-key.js'

export interface RevocationBatch {
  /** Opaque position to pass to the next call. */
  cursor: number
  hashes: string[]
}

/** Storage of API keys (hashes only, never the keys themselves). */
export interface KeyRepository {
  insertKey(record: ApiKeyRecord): Promise<void>
  /** Inserts the record only when no key exists at all; atomic across processes. True when inserted. */
  insertFirstKey(record: ApiKeyRecord): Promise<boolean>
  /** Includes revoked keys (revokedAt set). */
  findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>
  listKeys(): Promise<ApiKeyRecord[]>
  /** True when the key existed and was not already revoked. */
  revokeKey(id: string, at: number): Promise<boolean>
  /** Revocations recorded after `cursor` (0 for the current position with no hashes). */
  revocationsSince(cursor: number | null): Promise<RevocationBatch>
  /**
   * Optional push channel: calls `listener` with the hash of each key revoked from now on, in any
   * process, moments after the revocation commits. Best effort (messages sent while the channel
   * is reconnecting are lost), so callers keep polling `revocationsSince` as well. Resolves to an
   * unsubscribe function.
   */
  watchRevocations?(listener: (hash: string) => void): Promise<() => Promise<void>>
}
