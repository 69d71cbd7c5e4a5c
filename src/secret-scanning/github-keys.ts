import { createPublicKey, createVerify, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ApiError } from '../shared/errors.js'

/**
 * GitHub's secret scanning public keys, as GitHub publishes them at
 * https://api.github.com/meta/public_keys/secret_scanning: `{"public_keys": [{"key_identifier",
 * "key" (PEM), "is_current"}]}`. The service does not fetch them (it may not reach the internet,
 * and a key it fetched would be trusted because the network said so): the operator saves that
 * document to a file and names it in SECRET_SCANNING_PUBLIC_KEYS. Every key listed verifies, current
 * or not: GitHub signs with a key it still lists while it rotates.
 */
export type GithubPublicKeys = ReadonlyMap<string, KeyObject>

/** The keys of the file; a file that is not in that form stops the start, naming what is wrong. */
export function readGithubPublicKeys(path: string): GithubPublicKeys {
  let document: unknown
  try {
    document = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new Error(`SECRET_SCANNING_PUBLIC_KEYS: cannot read ${path} as JSON (${(error as Error).message})`)
  }
  const list = (document as { public_keys?: unknown } | null)?.public_keys
  if (!Array.isArray(list) || list.length === 0) throw new Error(`SECRET_SCANNING_PUBLIC_KEYS: ${path} has no public_keys list`)
  const keys = new Map<string, KeyObject>()
  for (const [i, entry] of list.entries()) {
    const { key_identifier: id, key } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown }
    if (typeof id !== 'string' || id === '' || typeof key !== 'string')
      throw new Error(`SECRET_SCANNING_PUBLIC_KEYS: public_keys[${i}] of ${path} needs a key_identifier and a key (PEM)`)
    try {
      keys.set(id, createPublicKey(key))
    } catch (error) {
      throw new Error(`SECRET_SCANNING_PUBLIC_KEYS: public_keys[${i}].key of ${path} is not a public key (${(error as Error).message})`)
    }
  }
  return keys
}

/**
 * True when `signature` (base64, the DER ECDSA signature GitHub sends in Github-Public-Key-Signature)
 * is the signature of `body`, the bytes as received, by the key named `identifier`
 * (Github-Public-Key-Identifier). ECDSA P-256 with SHA-256.
 */
export function isSignedByGithub(keys: GithubPublicKeys, identifier: string, signature: string, body: Buffer): boolean {
  const key = keys.get(identifier)
  if (key === undefined) return false
  try {
    return createVerify('SHA256').update(body).verify(key, signature, 'base64')
  } catch {
    // A signature that is not DER at all: not a signature by this key.
    return false
  }
}

const HEADERS_REQUIRED = 'Github-Public-Key-Identifier and Github-Public-Key-Signature are required'
const UNKNOWN_KEY = 'Github-Public-Key-Identifier names no configured GitHub public key'
const BAD_SIGNATURE = 'The signature is not valid for this body by any configured GitHub public key'

/** What the signature headers alone refuse, before the body is read: a missing one, a key identifier of no configured key. */
export function headersRefusal(keys: GithubPublicKeys, identifier: unknown, signature: unknown): ApiError | undefined {
  if (typeof identifier !== 'string' || typeof signature !== 'string') return new ApiError('unauthorized', HEADERS_REQUIRED)
  if (!keys.has(identifier)) return new ApiError('unauthorized', UNKNOWN_KEY)
  return undefined
}

/** The refusal of a body whose bytes `signature` does not sign by the key `identifier` names (headersRefusal passed). */
export function signatureRefusal(keys: GithubPublicKeys, identifier: string, signature: string, body: Buffer): ApiError | undefined {
  return isSignedByGithub(keys, identifier, signature, body) ? undefined : new ApiError('unauthorized', BAD_SIGNATURE)
}
