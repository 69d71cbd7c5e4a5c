import { createHash } from 'node:crypto'

/**
 * A change made under an Idempotency-Key (a create, an order): the record the store writes in the
 * change's own transaction, so that a crash after the commit can only lead to a replay, never to
 * a second change. One table for every operation: one key names one request.
 */
export interface IdempotencyClaim {
  /** Whose records: the API key's customer, else its quota, shared along its rotation chain (scope.ts). */
  scope: string
  /** The Idempotency-Key value (unquoted). */
  key: string
  /** SHA-256 (hex) of the canonical request body (`fingerprint`). */
  fingerprint: string
  /** Epoch ms; records older than the retention are deleted (sweep.ts). */
  createdAt: number
}

/**
 * SHA-256 (hex) of a request's canonical form: its validated fields in a fixed order, so that
 * spacing and key order do not matter. Each operation writes its own form (and tags it when two
 * forms could look alike), so that the same key sent to another operation is a reuse.
 */
export function fingerprint(canonical: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex')
}
