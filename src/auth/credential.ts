import type { FastifyRequest } from 'fastify'
import type { LimitDecision } from '../limits/limiter.js'
import type { ApiError } from '../shared/errors.js'
import type { Admission, KeyUsage, Limits, Presented, QuotaRead } from './admission.js'

/**
 * Why a request has no credential, in words every kind shares: no Authorization header, one that
 * is not `Bearer <secret>`, a secret that is unknown or revoked. A kind adds its own (an expired
 * API key; an API key sent where an admin token is needed).
 */
export type Unauthenticated = { problem: 'missing' | 'malformed' | 'invalid' }

/**
 * A presented secret as of this request: the credential to limit it by, or why there is none and
 * who presented it when storage knew the secret (revoked, expired).
 */
export type Judged<C, R> = { credential: C } | { refused: Unauthenticated | R; presented?: Presented }

/**
 * One kind of credential (API keys for /v1, admin tokens for /admin/v1), as the guard
 * (auth/guard.ts) uses it: the guard owns the order (header, cache, filter of known secrets,
 * address precheck, limiter, answer), the kind what its secrets are and say. `Found` is what a
 * lookup returns, `C` a valid credential, `R` the refusals the kind adds to Unauthenticated.
 */
export interface CredentialKind<Found, C, R = never> {
  /** Without a storage round trip: what is known of the secret, or undefined when storage must be asked. */
  resolveCached(secret: string): Found | undefined
  /** For a secret that is not cached: false when it cannot exist (the filter of known secrets), without storage. */
  mayExist(secret: string): boolean
  resolve(secret: string): Promise<Found>
  /** What was found, judged for this request (expiry, revocation). */
  judge(found: Found): Judged<C, R>
  /** The limiter identity and quota of a valid credential, and how a refusal names it. */
  limitedAs(credential: C): Limits
  /**
   * The request's admission for a valid credential, with the limiter's decision (allowed or not),
   * how it counts and, for a quota read, what it answers: the kind's variant of Admission.
   */
  admitted(credential: C, limits: Limits, decision: LimitDecision, usage: KeyUsage, quotaRead: QuotaRead | undefined): Admission
  /**
   * A valid credential, let through by the limiter, that may still not call this route: the 403
   * to answer with, or undefined. Only a kind with such a rule has one (admin tokens: their role;
   * API keys: their scopes).
   */
  authorize?(request: FastifyRequest, credential: C): ApiError | undefined
  /** The 401 of a request without a valid credential of this kind. */
  unauthorized(refused: Unauthenticated | R): ApiError
}
