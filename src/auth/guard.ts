import type { FastifyReply, FastifyRequest } from 'fastify'
import { parseBearer } from '../http/bearer.js'
import { clientAddress } from '../http/client-address.js'
import type { Done, Step } from '../http/pipeline.js'
import { settingsOf } from '../http/route-settings.js'
import type { LimitDecision, RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import { ApiError } from '../shared/errors.js'
import { ANONYMOUS_QUOTA } from '../shared/plans.js'
import { addressIdentity } from './address-identity.js'
import { decideIfAddressRefused } from './address-precheck.js'
import { type KeyUsage, type Limits, type Presented, PUBLIC_ADMISSION, type QuotaRead } from './admission.js'
import type { CredentialKind, Judged, Unauthenticated } from './credential.js'
import { secondsUntilRetry, setRateLimitHeaders } from './rate-limit-headers.js'
import { UncountedReads } from './uncounted-reads.js'

export interface GuardOptions {
  limiter: RateLimiter
  metrics: Metrics
  /**
   * The credential each route needs, chosen by its route config: `apiKey` (API keys,
   * auth/api-key-credential.ts) by default, `admin` (admin tokens,
   * auth/admin-token-credential.ts) for routes with `auth: 'admin'`, on the listener that
   * has them.
   */
  // biome-ignore lint/suspicious/noExplicitAny: each kind is typed where it is built; the guard only passes its values back to it.
  credentials: { apiKey: CredentialKind<any, any, any>; admin?: CredentialKind<any, any, any> }
}

/**
 * The 429 for a refused limiter decision (counted in the metrics; a ban's start logged), for API
 * keys and admin tokens alike. `who` names the credential the request was limited by, if any.
 */
export function refusal(request: FastifyRequest, decision: LimitDecision, metrics: Metrics, who: Presented | undefined): ApiError {
  const banned = decision.reason === 'key_banned'
  metrics.rateLimited.inc({ code: banned ? 'key_banned' : 'rate_limited' })
  if (decision.banStarted) {
    metrics.bans.inc()
    request.log.warn({ ...who, ip: who ? undefined : clientAddress(request), seconds: decision.retryAfter }, 'temporary ban started')
  }
  const subject = who === undefined ? 'This client address' : 'keyId' in who ? 'This API key' : 'This admin token'
  const wait = secondsUntilRetry(decision)
  return banned
    ? new ApiError('key_banned', `${subject} is temporarily banned for sending while rate limited; retry after ${wait} s`)
    : new ApiError('rate_limited', `Rate limit exceeded; retry after ${wait} s`)
}

/** The guard of an app: its admission step, and the hook that settles what it left to the answer. */
export interface Guard {
  /** The admission step of every request (see createGuard): sets `request.admission` once. */
  admit: Step
  /** onSend: settles a conditional read's count by its answer (auth/uncounted-reads.ts); main listener only. */
  settle: UncountedReads['settle']
}

/**
 * Authentication, then rate limiting, as one request step, so both run before the body is read or
 * validated: a request without a valid credential is 401, and a flood is refused before it costs
 * a parse. The one guard of every route: the route config picks the credential kind (an API key,
 * or with `auth: 'admin'` an admin token), and the kind says what its secrets are, how a valid
 * one is limited (an API key by its plan under its quota, an admin token at the admin quota) and
 * what its 401s say. Anything without a valid credential (no secret, a malformed, unknown,
 * revoked or expired one) is limited per client address at the Free plan's rates, which also
 * throttles guessing. Routes with `public: true` skip it; a request no route serves is limited
 * but not refused for want of a credential (it gets its 404/405). Whatever it decides, it says
 * once, in `request.admission` (auth/admission.ts); the handlers read nothing else.
 *
 * A cached secret and the in-memory limiter decide without a promise (this runs on every
 * request); storage lookups and Redis go async. A secret that is not cached is looked up when it
 * may exist (the filter of known secrets, keys/known-secrets.ts), whatever its address, so a
 * valid one is judged by its own quota; one that cannot exist only when its address is not
 * refused already (auth/address-precheck.ts): a limited or banned guesser costs storage nothing.
 *
 * An API key's conditional reads and quota reads are judged by auth/uncounted-reads.ts, whose
 * hook (`settle`) settles a conditional read's count once its answer is known.
 */
export function createGuard({ limiter, metrics, credentials }: GuardOptions): Guard {
  const uncountedReads = new UncountedReads(limiter, (request, decision, who) => refusal(request, decision, metrics, who))
  const apiKey = guardStep(credentials.apiKey, limiter, metrics, uncountedReads)
  const admin = credentials.admin && guardStep(credentials.admin, limiter, metrics, undefined)
  return {
    admit(request, reply, done) {
      const settings = settingsOf(request)
      if (settings.public === true) {
        request.admission = PUBLIC_ADMISSION
        done()
        return
      }
      if (settings.auth === 'admin' && admin !== undefined) return admin(request, reply, done)
      apiKey(request, reply, done)
    },
    settle: uncountedReads.settle,
  }
}

/** A request's credential when its header names none: the same for every such request. */
const MISSING: { refused: Unauthenticated } = { refused: { problem: 'missing' } }
const MALFORMED: { refused: Unauthenticated } = { refused: { problem: 'malformed' } }
const INVALID: { refused: Unauthenticated } = { refused: { problem: 'invalid' } }

/**
 * The guard's steps for the routes of one credential kind; `uncountedReads` for the kind whose
 * routes have conditional reads and quota reads (API keys: /v1).
 */
function guardStep<Found, C, R>(
  kind: CredentialKind<Found, C, R>,
  limiter: RateLimiter,
  metrics: Metrics,
  uncountedReads: UncountedReads | undefined,
): Step {
  /** A valid credential's limiter decision: the admission, and the error to answer with, if any. */
  const admitted = (
    request: FastifyRequest,
    reply: FastifyReply,
    credential: C,
    limits: Limits,
    decision: LimitDecision,
    usage: KeyUsage,
    quotaRead: QuotaRead | undefined,
  ): ApiError | undefined => {
    setRateLimitHeaders(reply, decision, limits.partitionKey)
    request.admission = kind.admitted(credential, limits, decision, usage, quotaRead)
    if (!decision.allowed) return refusal(request, decision, metrics, limits.who)
    // Before the body is read or validated, as the 401 is: a refused change costs no parse.
    return kind.authorize?.(request, credential)
  }

  /** A request without a valid credential, limited by its address: the admission, and the error to answer with, if any. */
  const anonymous = (
    request: FastifyRequest,
    reply: FastifyReply,
    refused: Unauthenticated | R,
    presented: Presented | undefined,
    decision: LimitDecision,
  ): ApiError | undefined => {
    setRateLimitHeaders(reply, decision)
    request.admission = { kind: 'anonymous', decision, presented }
    if (!decision.allowed) return refusal(request, decision, metrics, undefined)
    if (settingsOf(request).url === undefined) return undefined
    return kind.unauthorized(refused)
  }

  /** A lookup or the limiter failed: the request is answered with that error. */
  const failed = (request: FastifyRequest, presented: Presented | undefined, done: Done) => (error: Error) => {
    request.admission = { kind: 'failed', presented }
    done(error)
  }

  const limit = (
    request: FastifyRequest,
    reply: FastifyReply,
    judged: Judged<C, R>,
    done: Done,
    /** The address's decision, already taken for this request (decideIfAddressRefused). */
    addressDecision?: LimitDecision,
  ) => {
    if ('refused' in judged) {
      const { refused, presented } = judged
      if (addressDecision !== undefined) return done(anonymous(request, reply, refused, presented, addressDecision))
      const identity = addressIdentity(clientAddress(request))
      const decided = limiter.consumeSync?.(identity, ANONYMOUS_QUOTA)
      if (decided !== undefined) return done(anonymous(request, reply, refused, presented, decided))
      limiter
        .consume(identity, ANONYMOUS_QUOTA)
        .then((decision) => done(anonymous(request, reply, refused, presented, decision)), failed(request, presented, done))
      return
    }
    const { credential } = judged
    const limits = kind.limitedAs(credential)
    // A conditional read is counted only if its answer is not a 304; a quota read not at all, within its budget (auth/uncounted-reads.ts).
    const judging = uncountedReads?.judge(request, limits)
    if (judging !== undefined) {
      judging.then(
        ({ decision, usage, quotaRead }) => done(admitted(request, reply, credential, limits, decision, usage, quotaRead)),
        failed(request, limits.who, done),
      )
      return
    }
    const decided = limiter.consumeSync?.(limits.identity, limits.quota)
    if (decided !== undefined) return done(admitted(request, reply, credential, limits, decided, 'counted', undefined))
    limiter
      .consume(limits.identity, limits.quota)
      .then(
        (decision) => done(admitted(request, reply, credential, limits, decision, 'counted', undefined)),
        failed(request, limits.who, done),
      )
  }

  return (request, reply, done) => {
    const header = request.headers.authorization
    if (header === undefined || header === '') return limit(request, reply, MISSING, done)
    const secret = parseBearer(header)
    if (secret === undefined) return limit(request, reply, MALFORMED, done)
    const cached = kind.resolveCached(secret)
    if (cached !== undefined) return limit(request, reply, kind.judge(cached), done)
    const lookUp = (decided?: LimitDecision) =>
      kind.resolve(secret).then((found) => limit(request, reply, kind.judge(found), done, decided), failed(request, undefined, done))
    // A secret that may exist is looked up, whatever its address: if valid, its own quota decides.
    if (kind.mayExist(secret)) return void lookUp()
    // One that cannot is asked about only if its address is not refused anyway (then storage is asked nothing).
    decideIfAddressRefused(limiter, addressIdentity(clientAddress(request))).then(
      (decided) => {
        if (decided !== undefined && !decided.allowed) return done(anonymous(request, reply, INVALID.refused, undefined, decided))
        lookUp(decided)
      },
      failed(request, undefined, done),
    )
  }
}
