import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AdminTokenRecord } from '../admin-tokens/admin-token-repository.js'
import type { ApiKeyRecord } from '../keys/api-key.js'
import type { LimitDecision, UsageSnapshot } from '../limits/limiter.js'
import type { Quota } from '../shared/plans.js'

/**
 * What the guard (auth/guard.ts) decided about a request, the one place a request carries it:
 * set once, by the guard, for every request it sees (a request it never saw, refused before it
 * by the routing or a shutdown, has none). Handlers read it through the accessors below, which
 * throw an internal error when a route reads what its config cannot give (a keyed read on a
 * public route): a misconfigured route is a 500, never a silent `undefined`.
 */
export type Admission = PublicAdmission | AnonymousAdmission | ApiKeyAdmission | AdminTokenAdmission | FailedAdmission

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once by the guard (auth/guard.ts); null before it, or for a request it never saw. */
    admission: Admission | null
  }
}

/** A request's admission, empty until the guard sets it: the one declaration on the request. */
export function registerAdmission(app: FastifyInstance): void {
  app.decorateRequest('admission', null)
}

/** Who presented a secret storage knew, valid or not: named by the access line and a refusal's log line. */
export type Presented = { keyId: string } | { adminTokenId: string }

/** What a valid credential is limited as: its limiter identity and quota, who it is, the headers' partition key. */
export interface Limits {
  identity: string
  quota: Quota
  who: Presented
  partitionKey?: string
}

/** A route with `public: true`: the guard let it pass without a credential or a limit. */
export interface PublicAdmission {
  readonly kind: 'public'
}

export const PUBLIC_ADMISSION: PublicAdmission = Object.freeze({ kind: 'public' })

/**
 * No valid credential (none, malformed, unknown, revoked, expired): limited by the client address
 * at the anonymous rates, then 401 (or the 404/405 of a path no route serves). `presented`: the
 * key or admin token storage knew (revoked, expired), for the access line.
 */
export interface AnonymousAdmission {
  readonly kind: 'anonymous'
  readonly decision: LimitDecision
  readonly presented: Presented | undefined
}

/**
 * How a valid key's request stands against its quota and in its usage history:
 * - `counted`: the limiter counted it (`decision`), and usage history counts it;
 * - `uncounted`: neither (a quota read within its budget; a conditional read answered 304);
 * - `deferred`: a conditional read let through uncounted, whose answer settles it once it is
 *   known (the onSend hook of auth/uncounted-reads.ts): a 304 leaves it uncounted, any other
 *   answer is counted then (and becomes the 429 should the quota refuse it).
 */
export type KeyUsage = 'counted' | 'uncounted' | 'deferred'

/** What a quota read (GET /v1/rate_limit) answers: the key's windows as the next counted request finds them, and its budget. */
export interface QuotaRead {
  usage: UsageSnapshot
  /** The decision on this request's unit of the quota-read budget (`r:<identity>`): refused once it is spent. */
  budget: LimitDecision
  /** The credential's partition key (the headers' `pk`). */
  partitionKey?: string
}

/** A valid API key, judged by the limiter under its quota (allowed, or the 429 it is answered). */
export interface ApiKeyAdmission {
  readonly kind: 'apiKey'
  readonly key: ApiKeyRecord
  readonly limits: Limits
  /**
   * The limiter's decision on the request (its headers): its count, or for a read not counted the
   * windows as a peek found them. `decision` and `usage` change once, when a deferred read is
   * settled by its answer (auth/uncounted-reads.ts), and nowhere else.
   */
  decision: LimitDecision
  usage: KeyUsage
  /** On a route with `config.quotaRead`, let through: what it answers. */
  readonly quotaRead: QuotaRead | undefined
}

/** A valid admin token, judged by the limiter at the admin quota. */
export interface AdminTokenAdmission {
  readonly kind: 'adminToken'
  readonly token: AdminTokenRecord
  readonly limits: Limits
  readonly decision: LimitDecision
}

/**
 * The guard could not decide: a lookup or the limiter failed, and the request is answered with
 * that error (a 503). `presented`: the credential storage knew, if the lookup had found it.
 */
export interface FailedAdmission {
  readonly kind: 'failed'
  readonly presented: Presented | undefined
}

/** Thrown when a route reads an admission its config does not give it: a 500, logged (http/error-handler.ts). */
function misconfigured(request: FastifyRequest, wanted: string): Error {
  return new Error(
    `${request.method} ${request.url} reached its handler without ${wanted} (admission: ${request.admission?.kind ?? 'none'})`,
  )
}

/** The API key a keyed route was called with. */
export function apiKeyOf(request: FastifyRequest): ApiKeyRecord {
  const admission = request.admission
  if (admission?.kind !== 'apiKey') throw misconfigured(request, 'an API key')
  return admission.key
}

/** The admin token an admin route (`auth: 'admin'`) was called with. */
export function adminTokenOf(request: FastifyRequest): AdminTokenRecord {
  const admission = request.admission
  if (admission?.kind !== 'adminToken') throw misconfigured(request, 'an admin token')
  return admission.token
}

/** The key and what a quota read (`config.quotaRead`) answers, as the guard left them. */
export function quotaReadOf(request: FastifyRequest): { key: ApiKeyRecord; read: QuotaRead } {
  const admission = request.admission
  if (admission?.kind !== 'apiKey' || admission.quotaRead === undefined) throw misconfigured(request, 'the guard’s quota read')
  return { key: admission.key, read: admission.quotaRead }
}

/** The key or admin token presented, whenever storage knew it, whatever the answer: the access line's. */
export function presentedOf(request: FastifyRequest): Presented | undefined {
  const admission = request.admission
  if (admission === null) return undefined
  switch (admission.kind) {
    case 'apiKey':
    case 'adminToken':
      return admission.limits.who
    case 'anonymous':
    case 'failed':
      return admission.presented
    default:
      return undefined
  }
}

/**
 * The admission of a request usage history counts: a valid key's, judged by the limiter (allowed
 * or refused) and not left uncounted; undefined for any other request.
 */
export function countedKeyAdmission(request: FastifyRequest): ApiKeyAdmission | undefined {
  const admission = request.admission
  return admission !== null && admission.kind === 'apiKey' && admission.usage !== 'uncounted' ? admission : undefined
}
