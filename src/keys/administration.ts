import type { ChangeContext } from '../changes/audit-log.js'
import type { PlanName } from '../shared/plans.js'
import type { Scope } from '../shared/scopes.js'

/**
 * The contract between the key service (keys/) and its two front ends: the CLI (`animal-store keys
 * …`) and the admin HTTP API (`/admin/v1`). Both are thin: they parse their input, call these
 * functions and print or serialize what comes back. Every rule (plans, limits, expiry, rotation,
 * audit) lives behind this interface, once. A refused call throws a Refusal (shared/refusal.ts).
 *
 * Times are Unix milliseconds here; the front ends show them as ISO 8601 (RFC 3339) strings.
 */

/** `expired` covers a rotated key whose grace period is over. */
export const KEY_STATES = ['active', 'expired', 'revoked'] as const
export type KeyState = (typeof KEY_STATES)[number]

/** A key as the service shows it: never the key itself, never its hash. */
export interface KeyView {
  id: string
  name: string
  plan: PlanName
  perMinute: number
  perDay: number
  /** Display prefix (`as_live_AbCd`), safe to show and log. */
  prefix: string
  /**
   * The key's own quota: the id of the first key of its rotation chain (shared along it). A key of a
   * customer counts against the customer's instead: countedQuotaId (api-key.ts) names the one counted.
   */
  quotaId: string
  /**
   * The customer the key belongs to (cus_…), or null. A customer's keys share its quota and its
   * orders, and take its plan and limits (keys/api-key.ts, limiterIdentity).
   */
  customerId: string | null
  /** What the key may do (shared/scopes.ts), in the list's order; every scope unless it was given fewer. */
  scopes: Scope[]
  state: KeyState
  createdAt: number
  updatedAt: number
  expiresAt: number | null
  revokedAt: number | null
  /** The key this one was rotated to, and the one it was rotated from. */
  rotatedTo: string | null
  rotatedFrom: string | null
  /** Free-form JSON object for the operator (customer id, ticket, …); bounded in size. */
  metadata: Record<string, unknown> | null
  /** Last time a request authenticated with this key (stored in batches; the service adds what is pending). */
  lastUsedAt: number | null
}

export interface CreateKeyRequest {
  /** Required without a customer; refused with one (the key takes the customer's plan). */
  plan?: string
  name: string
  /** The customer the key belongs to: it takes the customer's plan and limits and shares its quota. */
  customerId?: string
  /** Enterprise only, and required there. */
  perMinute?: number
  perDay?: number
  /** At least one scope, each once; every scope when absent. */
  scopes?: readonly string[]
  /** Must be in the future. */
  expiresAt?: number | null
  metadata?: Record<string, unknown> | null
}

/** Only the fields present change; `null` clears expiresAt or metadata. */
export interface UpdateKeyRequest {
  name?: string
  plan?: string
  perMinute?: number
  perDay?: number
  scopes?: readonly string[]
  expiresAt?: number | null
  metadata?: Record<string, unknown> | null
}

export interface ListKeysQuery {
  plan?: PlanName
  /** Only the keys of this customer. */
  customerId?: string
  state?: KeyState
  /** Case-insensitive substring of the name. */
  name?: string
  /** Only keys with this display prefix (`as_live_AbCd`). */
  prefix?: string
  /** 1 to 100. */
  limit: number
  /** Key id cursor: keys are listed newest first (created_at, then id, descending), those after this key. */
  after?: string
}

export interface KeyPage {
  keys: KeyView[]
  /** Pass as `after` for the next page; null on the last page. */
  nextAfter: string | null
}

export interface WindowUsage {
  limit: number
  used: number
  remaining: number
  /** Unix seconds at which the window resets. */
  resetAt: number
}

/** The same numbers the rate-limit headers show, without counting a request. */
export interface KeyUsage {
  keyId: string
  /** The quota counted: its customer's id, else its rotation chain's (countedQuotaId of api-key.ts). */
  quotaId: string
  minute: WindowUsage
  day: WindowUsage
  ban: { active: boolean /** Unix seconds, or null when not banned. */; until: number | null; level: number }
  lastUsedAt: number | null
}

export interface Revocation {
  view: KeyView
  alreadyRevoked: boolean
  /** The other keys of its rotation chain that were still in their grace period, revoked with it, newest first. */
  alsoRevoked: KeyView[]
}

/** What a secret scanner says of a secret it found, and what to do about it (SECRET_SCANNING_ACTION). */
export interface LeakReport {
  action: 'revoke' | 'flag'
  /** Where the secret was found (a commit, an issue, a gist). */
  url: string
  /** What the scanner found it in (`content`, `commit`, `issue_comment`, …). */
  source: string | null
}

export interface KeyAdministration {
  createKey(input: CreateKeyRequest, ctx: ChangeContext): Promise<{ key: string; view: KeyView }>
  listKeys(query: ListKeysQuery, ctx?: ChangeContext): Promise<KeyPage>
  /** A `not_found` refusal for an unknown id. */
  getKey(id: string, ctx?: ChangeContext): Promise<KeyView>
  updateKey(id: string, patch: UpdateKeyRequest, ctx: ChangeContext): Promise<KeyView>
  /**
   * Issues a successor with the same plan, limits, name, metadata and quota; the old key keeps
   * working for `graceSeconds` (0 = revoked at once, at most 7 days), then answers 401 key_expired.
   */
  rotateKey(id: string, options: { graceSeconds: number }, ctx: ChangeContext): Promise<{ key: string; view: KeyView; previous: KeyView }>
  /**
   * Revokes the key and every other key of its rotation chain still in its grace period. Idempotent:
   * revoking a revoked key returns it with alreadyRevoked true and the first time kept (and still
   * ends the grace of its chain's keys, if any works).
   */
  revokeKey(id: string, ctx: ChangeContext): Promise<Revocation>
  /**
   * The key whose secret this is, in any state (a rotated or revoked key too), found by its hash:
   * the secret is neither stored nor written anywhere. A `not_found` refusal (naming no id) when no
   * key has it. Audited as `key.lookup` (a read) without the secret.
   */
  lookupKey(secret: string, ctx?: ChangeContext): Promise<KeyView>
  /**
   * A secret scanner found this secret in public (`url`): when it is one of our keys, revoke it
   * (`revoke`) or only record the report (`flag`). The report is on record as `key.leak_reported`
   * by the scanner, with the URL, in the transaction of the revocation it makes (`key.revoke` with
   * `leakUrl`), or alone when flagged. Undefined when no key has this secret.
   */
  reportLeak(secret: string, report: LeakReport, ctx: ChangeContext): Promise<KeyView | undefined>
  keyUsage(id: string, ctx?: ChangeContext): Promise<KeyUsage>
}

/** What the key service needs of a customer: its plan and limits, which its keys take. */
export interface CustomerPlan {
  id: string
  plan: PlanName
  perMinute: number
  perDay: number
}

/** Where the key service finds a customer (customers/, through its repository). */
export interface CustomerPlans {
  findCustomerById(id: string): Promise<CustomerPlan | undefined>
}

export const MAX_GRACE_SECONDS = 7 * 24 * 3600
export const MAX_METADATA_BYTES = 4096
