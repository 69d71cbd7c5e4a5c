import { hash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'
import type { Environment } from '../config/config.js'
import { BASE62, base62, randomId } from '../shared/base62.js'
import type { KeyView } from './administration.js'

/**
 * Key format: `as_live_` (production) or `as_test_` (staging), 32 random base62 characters
 * (~190 bits), then a 6-character base62 CRC32 of everything before it. The checksum lets the
 * service (and secret scanners) reject a mistyped or made-up key without touching storage.
 */
export const KEY_PREFIX: Record<Environment, string> = { production: 'as_live_', staging: 'as_test_' }
const RANDOM_LENGTH = 32
const CHECKSUM_LENGTH = 6
const KEY_PATTERN = /^as_(live|test)_[0-9A-Za-z]{38}$/

/**
 * Admin token format: the same shape with its own prefix, `as_admin_`, in every environment (an
 * admin token belongs to one deployment's database, not to an environment's clients). Another
 * prefix and another table: an API key is never an admin token, and a scanner tells them apart.
 */
export const ADMIN_TOKEN_PREFIX = 'as_admin_'
const ADMIN_TOKEN_PATTERN = /^as_admin_[0-9A-Za-z]{38}$/

/**
 * A key as stored: what the service shows of it (KeyView, less its derived state) and its hash.
 * `lastUsedAt` here is as last flushed by a server's last-used batcher (keys/last-used.ts); the
 * service adds what is still pending. `expiresAt` of a rotated key is the end of its grace period.
 */
export interface ApiKeyRecord extends Omit<KeyView, 'state'> {
  /** SHA-256 (hex) of the full key: the only form in which a key is stored. */
  hash: string
}

/**
 * The limiter identity of a key: its customer's quota (`c:<customer id>`, shared by every key of
 * the customer) when it has one, else its own (`k:<quota id>`, shared along its rotation chain).
 * No collision with a secondary budget (`c:<identity>` of conditional reads, `r:<identity>` of
 * quota reads, auth/uncounted-reads.ts): customer ids start with `cus_`, identities with `k:`,
 * `c:`, `a:`, `o:` or `adm:`, and none with `r:`.
 */
export const limiterIdentity = (record: Pick<ApiKeyRecord, 'quotaId' | 'customerId'>): string =>
  record.customerId === null ? 'k:' + record.quotaId : 'c:' + record.customerId

/**
 * The quota a key counts against, as the admin API and the CLI name it (`quotaId`): its customer's
 * id (`cus_…`) when it has one, whose quota every key of it shares, else its own quota's id (the
 * first key of its rotation chain). The same quota as limiterIdentity's, in the ids an operator
 * knows; the record's own `quotaId` stays the chain's (rotation and a chain's usage history read it).
 */
export const countedQuotaId = (record: Pick<ApiKeyRecord, 'quotaId' | 'customerId'>): string => record.customerId ?? record.quotaId

/**
 * Whose orders a key places and sees (stored with each order, opaque to everything else): its
 * customer's, for every key of it, or else the key's quota, shared along its rotation chain, so a
 * rotated key keeps its orders.
 */
export const orderOwner = (record: Pick<ApiKeyRecord, 'quotaId' | 'customerId'>): string =>
  record.customerId === null ? 'k:' + record.quotaId : customerOrderOwner(record.customerId)

/** The owner of a customer's orders (orderOwner of any key of it): an operator's filter by customer. */
export const customerOrderOwner = (customerId: string): string => 'c:' + customerId

/** Whose the events a key makes or is about are (events/): its customer's, its chain's (the quota id), its own. */
export const keyEventOwner = (record: Pick<ApiKeyRecord, 'id' | 'quotaId' | 'customerId'>) => ({
  customerId: record.customerId,
  keyChainId: record.quotaId,
  keyId: record.id,
})

/** Whose an owner of orders is, read back: its customer, or else its key chain (the quota id, the chain's first key). */
export function ordersOwnerOf(owner: string): { customerId: string | null; keyChainId: string | null } {
  if (owner.startsWith('c:')) return { customerId: owner.slice(2), keyChainId: null }
  if (owner.startsWith('k:')) return { customerId: null, keyChainId: owner.slice(2) }
  return { customerId: null, keyChainId: null }
}

const partitionKeys = new WeakMap<object, string>()

/**
 * The draft's partition key of a key's quota (RateLimit / RateLimit-Policy `pk`, a byte sequence):
 * the first 12 bytes of the SHA-256 of its limiter identity, so that two keys of one quota show
 * the same pk, without showing the customer's or the key's id. Computed once per record (records
 * are cached and replaced, never changed, when a key changes), then read without allocating.
 */
export function partitionKey(record: Pick<ApiKeyRecord, 'quotaId' | 'customerId'>): string {
  let pk = partitionKeys.get(record)
  if (pk === undefined) {
    pk = hash('sha256', limiterIdentity(record), 'buffer').subarray(0, 12).toString('base64')
    partitionKeys.set(record, pk)
  }
  return pk
}

function checksum(body: string): string {
  let n = crc32(body)
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}

function generateSecret(prefix: string): string {
  const body = prefix + base62(randomBytes(RANDOM_LENGTH + 8), RANDOM_LENGTH)
  return body + checksum(body)
}

const hasValidChecksum = (secret: string) =>
  checksum(secret.slice(0, secret.length - CHECKSUM_LENGTH)) === secret.slice(secret.length - CHECKSUM_LENGTH)

export function generateKey(env: Environment): string {
  return generateSecret(KEY_PREFIX[env])
}

/** True when the key has this environment's prefix, the right length and a valid checksum. */
export function isWellFormedKey(key: string, env: Environment): boolean {
  return KEY_PATTERN.test(key) && key.startsWith(KEY_PREFIX[env]) && hasValidChecksum(key)
}

/** Shaped like an API key of either environment (prefix and length; the checksum is not checked). */
export const looksLikeApiKey = (secret: string): boolean => KEY_PATTERN.test(secret)

export function generateAdminToken(): string {
  return generateSecret(ADMIN_TOKEN_PREFIX)
}

/** True when the token has the admin prefix, the right length and a valid checksum. */
export function isWellFormedAdminToken(token: string): boolean {
  return ADMIN_TOKEN_PATTERN.test(token) && hasValidChecksum(token)
}

/** SHA-256 in hex. crypto.hash is the one-shot form: about 3x cheaper than a Hash object, and this runs on every request. */
export function hashKey(key: string): string {
  return hash('sha256', key)
}

export const generateKeyId = (): string => randomId('key_')

export const generateAdminTokenId = (): string => randomId('adm_')
