import type { ChangeContext } from '../changes/audit-log.js'
import { type ChangeEntry, recordedChange } from '../changes/change-recorder.js'
import { bearerChallenge } from '../http/bearer.js'
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
import { ApiError } from '../shared/errors.js'
import { displayPrefix } from '../shared/key-redaction.js'
import { conflict, invalid, notFound, Refusal } from '../shared/refusal.js'
import {
  ADMIN_TOKEN_ROLES,
  type AdminTokenRecord,
  type AdminTokenRepository,
  type AdminTokenRole,
  DEFAULT_ADMIN_TOKEN_ROLE,
  isAdminTokenRole,
  withinRole,
} from './admin-token-repository.js'

/**
 * Admin tokens: created, listed and revoked by the CLI (it needs database access, which is what
 * makes its user an operator) and by the admin API with an `admin` token (admin/admin-tokens/,
 * the same functions below), presented by callers of the admin API. Only the SHA-256 and a
 * display prefix are stored; the token is returned once, by `createAdminToken`.
 *
 * The tokens form a tree, as Vault's do: the CLI makes the roots; a token made through the admin
 * API records the token that made it (`createdBy`), may have its role at most (`withinRole`), and
 * lives no longer than it: revoking a token revokes everything under it, in one transaction (the
 * stores' `revoke`). So the cleanup after a stolen token is one revocation, whatever the thief made
 * with it; and a token made for a colleague that must outlive its maker is made with the CLI.
 */

const MAX_NAME_LENGTH = 100

/**
 * Who a new token is for and what it may do; a name alone makes an `admin` token (the tokens made
 * before roles were). `by`: the admin token making it (the admin API), none from the CLI.
 */
export type AdminTokenSpec = string | { name: string; role?: AdminTokenRole; by?: Pick<AdminTokenRecord, 'id' | 'role'> }

/**
 * The 401 of a token revoked between its request's check and its change: not a refusal of the
 * call but the guard's answer to its credential, given late (the same words and challenge).
 */
const revokedMaker = () =>
  new ApiError('unauthorized', ADMIN_UNAUTHORIZED.invalid, { 'www-authenticate': bearerChallenge('invalid_token') })

const aboveMaker = (maker: AdminTokenRole, role: AdminTokenRole) =>
  new Refusal(
    'forbidden',
    `This admin token has the role ${maker}: it may make admin tokens of the roles ${ADMIN_TOKEN_ROLES.filter((r) => withinRole(r, maker)).join(', ')}, not ${role}`,
  )

export async function createAdminToken(
  tokens: AdminTokenRepository,
  spec: AdminTokenSpec,
  audit?: ChangeContext,
  now = Date.now(),
): Promise<{ token: string; record: AdminTokenRecord }> {
  const { name, role = DEFAULT_ADMIN_TOKEN_ROLE, by } = typeof spec === 'string' ? { name: spec } : spec
  if (!isAdminTokenRole(role)) throw invalid('role', (f) => `${f('role')} must be one of ${ADMIN_TOKEN_ROLES.join(', ')}`)
  if (name.trim() === '' || name.length > MAX_NAME_LENGTH)
    throw invalid('name', (f) => `${f('name')} must be 1 to ${MAX_NAME_LENGTH} characters`)
  if (hasControlCharacter(name)) throw invalid('name', (f) => `${f('name')} ${CONTROL_CHARACTERS_REFUSED}`)
  const hidden = hiddenCharacterRefusal(name)
  if (hidden !== undefined) throw invalid('name', (f) => `${f('name')} ${hidden}`)
  if (by !== undefined && !withinRole(role, by.role)) throw aboveMaker(by.role, role)
  const token = generateAdminToken()
  const record: AdminTokenRecord = {
    id: generateAdminTokenId(),
    name,
    hash: hashKey(token),
    prefix: displayPrefix(token),
    role,
    createdBy: by?.id ?? null,
    createdAt: now,
    revokedAt: null,
  }
  const recorded = recordedChange(audit, now, {
    action: 'admin_token.create',
    details: { tokenId: record.id, name, prefix: record.prefix, role },
  })
  // The store checks the maker again, in the insert's transaction: a revocation that committed
  // since this request's token was checked refuses the insert rather than miss the new token.
  const outcome = await tokens.insert(record, recorded)
  if (outcome === 'maker_revoked') throw revokedMaker()
  if (outcome === 'above_maker') throw aboveMaker(by!.role, role)
  return { token, record }
}

/** The ids of the tokens above `token` in the tree: its maker, its maker's maker, … up to a root. */
export function makersOf(all: readonly AdminTokenRecord[], token: Pick<AdminTokenRecord, 'createdBy'>): string[] {
  const byId = new Map(all.map((t) => [t.id, t]))
  const makers: string[] = []
  for (let id = token.createdBy; id !== null && !makers.includes(id); id = byId.get(id)?.createdBy ?? null) makers.push(id)
  return makers
}

/**
 * Revokes the token and everything under it (see the repository's `revoke`): one audit entry for
 * the token named (with `alsoRevoked`, the ids taken with it) and one per token taken with it
 * (`revokedWith`), in the same transaction. Idempotent: revoking a revoked token returns it with
 * `alreadyRevoked` and the first revocation time kept (and revokes what is still active under it).
 * A `not_found` refusal when no token has this id.
 *
 * `by`, the admin token asking (the admin API), may revoke neither itself nor a token above it:
 * the revocation would take it along and end its session, and a stolen token could otherwise take
 * down the token of the operator who made it, and all it made (a `conflict`; the CLI, or a token that is not
 * above it, revokes them). Any other token it may revoke: an operator cleans up from the console;
 * what a thief revokes is on record, and the CLI, which no token can lock out, makes tokens again.
 */
export async function revokeAdminToken(
  tokens: AdminTokenRepository,
  id: string,
  audit?: ChangeContext,
  now = Date.now(),
  by?: Pick<AdminTokenRecord, 'id' | 'createdBy'>,
): Promise<{ record: AdminTokenRecord; alreadyRevoked: boolean; alsoRevoked: AdminTokenRecord[] }> {
  if (by?.id === id) {
    throw conflict(
      `An admin token cannot revoke itself (it would end this session): revoke it with another admin token, or with the CLI (${CLI} admin-tokens revoke ${id})`,
    )
  }
  if (by !== undefined && makersOf(await tokens.list(), by).includes(id)) {
    throw conflict(
      `Admin token ${id} made this one (or made the token that did): revoking it would revoke this token too. Revoke it with a token it did not make, or with the CLI (${CLI} admin-tokens revoke ${id})`,
    )
  }
  const revocation = await tokens.revoke(id, now, ({ record, revokedNow, alsoRevoked }) =>
    recordedChange(
      audit,
      now,
      {
        action: 'admin_token.revoke',
        // A repeat changes nothing of the token but succeeds all the same: on record, as a repeated key revoke is.
        details: {
          tokenId: id,
          name: record.name,
          prefix: record.prefix,
          ...(revokedNow ? {} : { alreadyRevoked: true }),
          ...(alsoRevoked.length === 0 ? {} : { alsoRevoked: alsoRevoked.map((t) => t.id) }),
        },
      },
      ...alsoRevoked.map(
        (t): ChangeEntry => ({
          action: 'admin_token.revoke',
          details: { tokenId: t.id, name: t.name, prefix: t.prefix, createdBy: t.createdBy, revokedWith: id },
        }),
      ),
    ),
  )
  if (revocation === undefined) throw notFound('admin_token', id)
  return { record: revocation.record, alreadyRevoked: !revocation.revokedNow, alsoRevoked: revocation.alsoRevoked }
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
export const adminTokenJson = (
  record: Pick<AdminTokenRecord, 'id' | 'name' | 'prefix' | 'role' | 'createdBy' | 'createdAt' | 'revokedAt'>,
) => ({
  id: record.id,
  name: record.name,
  prefix: record.prefix,
  role: record.role,
  createdBy: record.createdBy,
  createdAt: new Date(record.createdAt).toISOString(),
  revokedAt: record.revokedAt === null ? null : new Date(record.revokedAt).toISOString(),
})
