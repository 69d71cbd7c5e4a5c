import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientAddress } from '../http/client-address.js'
import type { Done, Step } from '../http/pipeline.js'
import { settingsOf } from '../http/route-settings.js'
import type { LimitDecision, RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import { ApiError } from '../shared/errors.js'
import { ANONYMOUS_QUOTA, type Quota } from '../shared/plans.js'
import { addressIdentity } from './address-identity.js'
import { decideIfAddressRefused } from './address-precheck.js'
import { parseBearer } from './bearer.js'
import type { Admission, CredentialKind, LimitedAs } from './credential.js'
import { secondsUntilRetry, setRateLimitHeaders } from './rate-limit-headers.js'
import { UncountedReads } from './uncounted-reads.js'

export interface GuardOptions {
  limiter: RateLimiter
  metrics: Metrics
  /**
   * The credential each route needs, chosen by its route config: `apiKey` (API keys,
   * auth/api-key-credential.ts) by default, `admin` (admin tokens,
   * admin-tokens/admin-token-credential.ts) for routes with `auth: 'admin'`, on the listener that
   * has them.
   */
  // biome-ignore lint/suspicious/noExplicitAny: each kind is typed where it is built; the guard only passes its values back to it.
  credentials: { apiKey: CredentialKind<any, any, any>; admin?: CredentialKind<any, any, any> }
}

/**
 * The 429 for a refused limiter decision (counted in the metrics; a ban's start logged), for API
 * keys and admin tokens alike. `who` names the credential the request was limited by, if any.
 */
export function refusal(request: FastifyRequest, decision: LimitDecision, metrics: Metrics, who: LimitedAs | undefined): ApiError {
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

/**
 * Authentication, then rate limiting, as one request step, so both run before the body is read or
 * validated: a request without a valid credential is 401, and a flood is refused before it costs
 * a parse. The one guard of every route: the route config picks the credential kind (an API key,
 * or with `auth: 'admin'` an admin token), and the kind says what its secrets are, how a valid
 * one is limited (an API key by its plan under its quota, an admin token at the admin quota) and
 * what its 401s say. Anything without a valid credential (no secret, a malformed, unknown,
 * revoked or expired one) is limited per client address at the Free plan's rates, which also
 * throttles guessing. Routes with `public: true` skip it; a request no route serves is limited
 * but not refused for want of a credential (it gets its 404/405).
 *
 * A cached secret and the in-memory limiter decide without a promise (this runs on every
 * request); storage lookups and Redis go async. A secret that is not cached is looked up when it
 * may exist (the filter of known secrets, keys/known-secrets.ts), whatever its address, so a
 * valid one is judged by its own quota; one that cannot exist only when its address is not
 * refused already (auth/address-precheck.ts): a limited or banned guesser costs storage nothing.
 */
export function createGuard({ limiter, metrics, credentials }: GuardOptions): Step {
  const apiKey = guardStep(credentials.apiKey, limiter, metrics)
  const admin = credentials.admin && guardStep(credentials.admin, limiter, metrics)
  return (request, reply, done) => {
    const settings = settingsOf(request)
    if (settings.public === true) {
      done()
      return
    }
    if (settings.auth === 'admin' && admin !== undefined) return admin(request, reply, done)
    apiKey(request, reply, done)
  }
}

/** The guard's steps for the routes of one credential kind. */
function guardStep<Found, C, R>(kind: CredentialKind<Found, C, R>, limiter: RateLimiter, metrics: Metrics): Step {
  const uncountedReads = new UncountedReads(limiter, (request, decision, who) => refusal(request, decision, metrics, who))
  /** Applies a limiter decision and the authentication outcome: the error to answer with, if any. */
  const conclude = (
    request: FastifyRequest,
    reply: FastifyReply,
    admission: Admission<C, R>,
    decision: LimitDecision,
    who: LimitedAs | undefined,
    /** The credential's partition key (the headers' `pk`), if its kind has one. */
    partitionKey?: string,
  ): ApiError | undefined => {
    setRateLimitHeaders(reply, decision, partitionKey)
    const { credential } = admission
    if (credential !== undefined) kind.decided?.(request, credential, decision)
    if (!decision.allowed) return refusal(request, decision, metrics, who)
    if (credential !== undefined) {
      // Before the body is read or validated, as the 401 is: a refused change costs no parse.
      const forbidden = kind.authorize?.(request, credential)
      if (forbidden !== undefined) return forbidden
      kind.accept(request, credential)
      return undefined
    }
    if (settingsOf(request).url === undefined) return undefined
    return kind.unauthorized(admission.refused!)
  }

  const limit = (
    request: FastifyRequest,
    reply: FastifyReply,
    admission: Admission<C, R>,
    done: Done,
    /** The address's decision, already taken for this request (decideIfAddressRefused). */
    addressDecision?: LimitDecision,
  ) => {
    const { credential } = admission
    if (credential === undefined && addressDecision !== undefined) {
      done(conclude(request, reply, admission, addressDecision, undefined))
      return
    }
    let identity: string
    let quota: Quota
    let who: LimitedAs | undefined
    let partitionKey: string | undefined
    if (credential !== undefined) {
      const limitedAs = kind.limitedAs(credential)
      ;({ identity, quota, who, partitionKey } = limitedAs)
      // A conditional read is counted only if its answer is not a 304; a quota read not at all, within its budget (auth/uncounted-reads.ts).
      const judged = uncountedReads.judge(request, reply, limitedAs)
      if (judged !== undefined) {
        judged.then(
          ({ decision, unrecorded }) => {
            const error = conclude(request, reply, admission, decision, who, partitionKey)
            // Nothing was counted: usage history's `allowed` stays the requests the quota counted.
            if (unrecorded) request.usageKeyId = null
            done(error)
          },
          (error: Error) => done(error),
        )
        return
      }
    } else {
      identity = addressIdentity(clientAddress(request))
      quota = ANONYMOUS_QUOTA
    }
    const decided = limiter.consumeSync?.(identity, quota)
    if (decided !== undefined) {
      done(conclude(request, reply, admission, decided, who, partitionKey))
      return
    }
    limiter.consume(identity, quota).then(
      (decision) => done(conclude(request, reply, admission, decision, who, partitionKey)),
      (error: Error) => done(error),
    )
  }

  return (request, reply, done) => {
    const header = request.headers.authorization
    if (header === undefined || header === '') return limit(request, reply, { refused: { problem: 'missing' } }, done)
    const secret = parseBearer(header)
    if (secret === undefined) return limit(request, reply, { refused: { problem: 'malformed' } }, done)
    const cached = kind.resolveCached(secret)
    if (cached !== undefined) return limit(request, reply, kind.admit(request, cached), done)
    const lookUp = (decided?: LimitDecision) =>
      kind.resolve(secret).then(
        (found) => limit(request, reply, kind.admit(request, found), done, decided),
        (error: Error) => done(error),
      )
    // A secret that may exist is looked up, whatever its address: if valid, its own quota decides.
    if (kind.mayExist(secret)) return void lookUp()
    // One that cannot is asked about only if its address is not refused anyway (then storage is asked nothing).
    decideIfAddressRefused(limiter, addressIdentity(clientAddress(request))).then(
      (decided) => {
        if (decided !== undefined && !decided.allowed)
          return done(conclude(request, reply, { refused: { problem: 'invalid' } }, decided, undefined))
        lookUp(decided)
      },
      (error: Error) => done(error),
    )
  }
}
