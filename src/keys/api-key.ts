import { hash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'
import type { Environment } from '../config.js'
import type { PlanName } from './plans.js'

/**
 * Key format: `as_live_` (production) or `as_test_` (staging), 32 random base62 characters
 * (~190 bits), then a 6-character base62 CRC32 of everything before it. The checksum lets the
 * service (and secret scanners) reject a mistyped or made-up key without touching storage.
 */
export const KEY_PREFIX: Record<Environment, string> = { production: 'as_live_', staging: 'as_test_' }
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const RANDOM_LENGTH = 32
const CHECKSUM_LENGTH = 6
const KEY_PATTERN = /^as_(live|test)_[0-9A-Za-z]{38}$/

export interface ApiKeyRecord {
  id: string
  name: string
  plan: PlanName
  perMinute: number
  perDay: number
  /** SHA-256 (hex) of the full key: the only form in which a key is stored. */
  hash: string
  /** Display prefix (environment prefix and first 4 random characters), safe to show and log. */
  prefix: string
  /** The quota (limiter identity `k:<quotaId>`) the key counts against: the first key id of its rotation chain. */
  quotaId: string
  createdAt: number
  /** Last change to name, plan, limits, metadata, expiry, rotation or revocation. */
  updatedAt: number
  /** The key answers 401 key_expired from this time on (a rotated key: the end of its grace period). */
  expiresAt: number | null
  revokedAt: number | null
  rotatedTo: string | null
  rotatedFrom: string | null
  /** Free-form JSON object for the operator; never read by the service. */
  metadata: Record<string, unknown> | null
  /** As last flushed by a server's last-used batcher (see keys/last-used.ts). */
  lastUsedAt: number | null
}

function base62(bytes: Buffer, length: number): string {
  let out = ''
  // Rejection sampling keeps every character uniform (248 = 4 * 62).
  let i = 0
  let pool = bytes
  while (out.length < length) {
    if (i >= pool.length) {
      pool = randomBytes(length)
      i = 0
    }
    const b = pool[i++]!
    if (b < 248) out += BASE62[b % 62]
  }
  return out
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

export function generateKey(env: Environment): string {
  const body = KEY_PREFIX[env] + base62(randomBytes(RANDOM_LENGTH + 8), RANDOM_LENGTH)
  return body + checksum(body)
}

/** True when the key has this environment's prefix, the right length and a valid checksum. */
export function isWellFormedKey(key: string, env: Environment): boolean {
  if (!KEY_PATTERN.test(key) || !key.startsWith(KEY_PREFIX[env])) return false
  const body = key.slice(0, key.length - CHECKSUM_LENGTH)
  return checksum(body) === key.slice(key.length - CHECKSUM_LENGTH)
}

/** SHA-256 in hex. crypto.hash is the one-shot form: about 3x cheaper than a Hash object, and this runs on every request. */
export function hashKey(key: string): string {
  return hash('sha256', key)
}

export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.production.length + 4)
}

export function generateKeyId(): string {
  return 'key_' + base62(randomBytes(24), 16)
}
