import type { Actor, AuditRepository } from '../keys/administration.js'
import {
  ADMIN_TOKEN_PREFIX,
  generateAdminToken,
  generateAdminTokenId,
  hashKey,
  isWellFormedAdminToken,
  looksLikeApiKey,
} from '../keys/api-key.js'
import type { KnownSecrets } from '../keys/known-secrets.js'
import { SecretLookups } from '../keys/secret-lookups.js'
import { CLI } from '../shared/command-name.js'
import { CONTROL_CHARACTERS_REFUSED, hasControlCharacter, hiddenCharacterRefusal } from '../shared/control-characters.js'
import { displayPrefix } from '../shared/key-redaction.js'
import {
  ADMIN_TOKEN_ROLES,
  type AdminTokenRecord,
  type AdminTokenRepository,
  type AdminTokenRole,
  DEFAULT_ADMIN_TOKEN_ROLE,
  isAdminTokenRole,
} from './admin-token-repository.js'

/**
 * Admin tokens: created, listed and revoked by the CLI (it needs database access, which is what
 * makes its user an operator) and by the admin API with an `admin` token (admin/admin-tokens/,
 * the same functions below), presented by callers of the admin API. Only the SHA-256 and a
 * display prefix are stored; the token is returned once, by `createAdminToken`.
 */

export class AdminTokenInputError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'AdminTokenInputError'
  }
}

/** Where a token change is written to the audit log, by whom; none until the store has one. */
export interface AdminTokenAudit {
  audit: AuditRepository
  actor: Actor
  /** The X-Request-Id of the admin call (the admin API's); none from the CLI. */
  requestId?: string
}

const MAX_NAME_LENGTH = 100

/** Who a new token is for and what it may do; a name alone makes an `admin` token (the tokens made before roles were). */
export type AdminTokenSpec = string | { name: string; role?: AdminTokenRole }

export async function createAdminToken(
  tokens: AdminTokenRepository,
  spec: AdminTokenSpec,
  audit?: AdminTokenAudit,
  now = Date.now(),
): Promise<{ token: string; record: AdminTokenRecord }> {
  const { name, role = DEFAULT_ADMIN_TOKEN_ROLE } = typeof spec === 'string' ? { name: spec } : spec
  if (!isAdminTokenRole(role)) throw new AdminTokenInputError(`--role must be one of ${ADMIN_TOKEN_ROLES.join(', ')}`)
  if (name.trim() === '' || name.length > MAX_NAME_LENGTH)
    throw new AdminTokenInputError(`--name must be 1 to ${MAX_NAME_LENGTH} characters`)
  if (hasControlCharacter(name)) throw new AdminTokenInputError(`--name ${CONTROL_CHARACTERS_REFUSED}`)
  const hidden = hiddenCharacterRefusal(name)
  if (hidden !== undefined) throw new AdminTokenInputError(`--name ${hidden}`)
  const token = generateAdminToken()
  const record: AdminTokenRecord = {
    id: generateAdminTokenId(),
    name,
    hash: hashKey(token),
    prefix: displayPrefix(token),
    role,
    createdAt: now,
    revokedAt: null,
  }
  await tokens.insert(record)
  await audit?.audit.append({
    at: now,
    actor: audit.actor,
    action: 'admin_token.create',
    keyId: null,
    details: { tokenId: record.id, name, prefix: record.prefix, role },
    requestId: audit.requestId ?? null,
  })
  return { token, record }
}

/**
 * Idempotent: revoking a revoked token returns it with `alreadyRevoked` and the first revocation
 * time kept. Undefined when no token has this id.
 */
export async function revokeAdminToken(
  tokens: AdminTokenRepository,
  id: string,
  audit?: AdminTokenAudit,
  now = Date.now(),
): Promise<{ record: AdminTokenRecord; alreadyRevoked: boolean } | undefined> {
  const revoked = await tokens.revoke(id, now)
  const record = (await tokens.list()).find((t) => t.id === id)
  if (record === undefined) return undefined
  // A repeat changes nothing but succeeds all the same: on record, as a repeated key revoke is.
  await audit?.audit.append({
    at: now,
    actor: audit.actor,
    action: 'admin_token.revoke',
    keyId: null,
    details: { tokenId: id, name: record.name, prefix: record.prefix, ...(revoked ? {} : { alreadyRevoked: true }) },
    requestId: audit.requestId ?? null,
  })
  return { record, alreadyRevoked: !revoked }
}

/** Why a presented admin token is refused: each answers 401 with its own message. */
export type AdminAuthProblem = 'missing' | 'malformed' | 'api_key' | 'invalid'

/** A revoked token is refused like an unknown one, but its id is known (the access line names it). */
export type AdminAuthResult =
  | { token: AdminTokenRecord; problem?: undefined; revokedTokenId?: undefined }
  | { token?: undefined; problem: AdminAuthProblem; revokedTokenId?: string }

/**
 * Presented token -> its record, cached like API keys (SecretLookups): a valid token is read from
 * storage once, then kept until the change log says it was revoked (the CLI's revoke writes it
 * there: every instance drops the token within the key refresh interval, at once with PostgreSQL
 * NOTIFY; see `forget`, called by the key resolver it follows). A revoked or unknown token is
 * asked about again each time, but one that cannot exist (`known`, the key resolver's filter of
 * known secrets, which holds the admin tokens' hashes too) is not, from an address that is refused
 * already. A malformed token (or an API key) never reaches storage.
 */
export class AdminTokenResolver {
  private readonly lookups: SecretLookups<AdminTokenRecord>

  constructor(
    tokens: AdminTokenRepository,
    private readonly known: KnownSecrets,
  ) {
    this.lookups = new SecretLookups(
      (hash) => tokens.findByHash(hash),
      (record) => record.revokedAt === null,
    )
  }

  /** Without a storage round trip: the answer, or undefined when storage must be asked. */
  resolveCached(presented: string): AdminAuthResult | undefined {
    if (!isWellFormedAdminToken(presented)) return { problem: looksLikeApiKey(presented) ? 'api_key' : 'invalid' }
    const record = this.lookups.cached(hashKey(presented))
    return record === undefined ? undefined : { token: record }
  }

  /** For a well-formed token that is not cached: false when no such token exists (or it was found unknown or revoked), without storage. */
  mayExist(presented: string): boolean {
    return this.known.mayExist(hashKey(presented))
  }

  async resolve(presented: string): Promise<AdminAuthResult> {
    const known = this.resolveCached(presented)
    if (known !== undefined) return known
    const hash = hashKey(presented)
    const record = await this.known.lookup(
      hash,
      () => this.lookups.lookup(hash),
      (token) => token.revokedAt === null,
    )
    if (record === undefined) return { problem: 'invalid' }
    if (record.revokedAt !== null) return { problem: 'invalid', revokedTokenId: record.id }
    return { token: record }
  }

  /** Drops one token's hash (its revocation, read from the change log, or made by this process). */
  forget(hash: string): void {
    this.lookups.forget(hash)
  }

  /** A token this process created (the admin API): known at once; other processes learn of it from the change log. */
  created(hash: string): void {
    this.known.add(hash)
  }
}

export const ADMIN_UNAUTHORIZED: Record<AdminAuthProblem, string> = {
  // The command as docs/keys.md and the banner give it, run in the project directory (`animal-store` is not on the PATH there).
  missing: `Missing admin token: send Authorization: Bearer ${ADMIN_TOKEN_PREFIX}… (create one with: ${CLI} admin-tokens create --name NAME)`,
  malformed: `Malformed Authorization header: expected Bearer ${ADMIN_TOKEN_PREFIX}…`,
  api_key: `API keys cannot call the admin API: send an admin token (${ADMIN_TOKEN_PREFIX}…)`,
  invalid: 'Invalid or revoked admin token',
}

/** An admin token as JSON (never the token itself, nor its hash): the CLI's `--json` and the admin API's /admin-tokens answers. */
export const adminTokenJson = (record: Pick<AdminTokenRecord, 'id' | 'name' | 'prefix' | 'role' | 'createdAt' | 'revokedAt'>) => ({
  id: record.id,
  name: record.name,
  prefix: record.prefix,
  role: record.role,
  createdAt: new Date(record.createdAt).toISOString(),
  revokedAt: record.revokedAt === null ? null : new Date(record.revokedAt).toISOString(),
})
