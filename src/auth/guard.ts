import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientAddress } from '../http/client-address.js'
import type { Done, Step } from '../http/pipeline.js'
import { settingsOf } from '../http/route-settings.js'
import { type ApiKeyRecord, limiterIdentity } from '../keys/api-key.js'
import type { KeyResolver } from '../keys/key-resolver.js'
import type { LastUsedRecorder } from '../keys/last-used.js'
import type { LimitDecision, RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import { ANONYMOUS_QUOTA } from '../shared/plans.js'
import type { LimitOutcome } from '../usage/counts.js'
import { addressIdentity } from './address-identity.js'
import { decideIfAddressRefused } from './address-precheck.js'
import { bearerChallenge, parseBearer } from './bearer.js'
import { ConditionalQuota } from './conditional-quota.js'
import { secondsUntilRetry, setRateLimitHeaders } from './rate-limit-headers.js'

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null
    /**
     * The id of the key the request presented, once storage knows that key, whether or not it was
     * let through (expired, revoked, over its limit): the access line names it.
     */
    presentedKeyId?: string
    /**
     * The valid key whose quota the limiter judged this request by, and its verdict (null without
     * one): usage history counts the request against it once the answer is sent (usage/count-hook.ts).
     */
    usageKeyId: string | null
    limitOutcome: LimitOutcome | null
  }
}

export interface GuardOptions {
  keys: KeyResolver
  limiter: RateLimiter
  metrics: Metrics
  /** Expiry is checked against it on every request. */
  clock: Clock
  lastUsed: Pick<LastUsedRecorder, 'touch'>
  /** The step that authenticates and limits routes with `auth: 'admin'` (admin tokens, not API keys). */
  admin?: Step
}

/**
 * The 429 for a refused limiter decision (counted in the metrics; a ban's start logged), for API
 * keys and admin tokens alike. `who` names the credential the request was limited by, if any.
 */
export function refusal(
  request: FastifyRequest,
  decision: LimitDecision,
  metrics: Metrics,
  who: { keyId: string } | { adminTokenId: string } | undefined,
): ApiError {
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

type Problem = 'missing' | 'malformed' | 'invalid' | 'expired'

const UNAUTHORIZED: Record<Exclude<Problem, 'expired'>, string> = {
  missing: 'Missing API key: send Authorization: Bearer <API key>',
  malformed: 'Malformed Authorization header: expected Bearer <API key>',
  invalid: 'Invalid or revoked API key',
}

/**
 * Authentication, then rate limiting, as one request step, so both run before the body is read or
 * validated: a keyless bad request is 401, and a flood is refused before it costs a parse.
 * A valid key is limited by its plan, under its quota (`k:<quotaId>`, shared along its rotation
 * chain); anything else (no key, a malformed, unknown, revoked or expired key) is limited per
 * client address at the Free plan's rates, which also throttles key guessing. An expired key
 * (also a rotated one past its grace period) is 401 key_expired, checked against the clock on
 * every request, so expiry needs no cache invalidation.
 * Routes with `public: true` skip both; routes with `auth: 'admin'` go to the `admin` step instead
 * (admin tokens, the admin quota). Every route needs a key; a request no route serves is
 * limited but not refused for want of a key (it gets its 404/405).
 *
 * A cached key and the in-memory limiter decide without a promise (this runs on every request);
 * storage lookups and Redis go async. A key that is not cached is looked up when it may exist (the
 * filter of known secrets, keys/known-secrets.ts), whatever its address, so a valid key is judged
 * by its own plan; one that cannot exist only when its address is not refused already
 * (auth/address-precheck.ts): a limited or banned guesser costs storage nothing.
 */
export function createGuard({ keys, limiter, metrics, clock, lastUsed, admin }: GuardOptions): Step {
  const conditional = new ConditionalQuota(limiter, (request, d) => refusal(request, d, metrics, { keyId: request.apiKey!.id }))
  /** Applies a limiter decision and the authentication outcome: the error to answer with, if any. */
  const conclude = (
    request: FastifyRequest,
    reply: FastifyReply,
    key: ApiKeyRecord | undefined,
    problem: Problem | undefined,
    decision: LimitDecision,
    expiredAt: number | undefined,
  ): ApiError | undefined => {
    setRateLimitHeaders(reply, decision)
    if (key !== undefined) {
      request.usageKeyId = key.id
      request.limitOutcome = decision.allowed ? 'allowed' : (decision.reason ?? 'rate_limited')
    }
    if (!decision.allowed) return refusal(request, decision, metrics, key ? { keyId: key.id } : undefined)
    if (key !== undefined) {
      request.apiKey = key
      return undefined
    }
    if (settingsOf(request).url === undefined) return undefined
    if (problem === 'expired')
      return new ApiError('key_expired', `This API key expired at ${new Date(expiredAt!).toISOString()}`, {
        'www-authenticate': bearerChallenge('invalid_token'),
      })
    return new ApiError('unauthorized', UNAUTHORIZED[problem!], {
      'www-authenticate': bearerChallenge(problem === 'missing' ? 'invalid_request' : 'invalid_token'),
    })
  }

  const limit = (
    request: FastifyRequest,
    reply: FastifyReply,
    found: ApiKeyRecord | undefined,
    invalid: Problem | undefined,
    done: Done,
    /** The address's decision, already taken for this request (decideIfAddressRefused). */
    addressDecision?: LimitDecision,
  ) => {
    let key = found
    let problem = invalid
    let expiredAt: number | undefined
    if (key !== undefined) {
      request.presentedKeyId = key.id
      const now = clock.now()
      if (key.revokedAt !== null) {
        key = undefined
        problem = 'invalid'
      } else if (key.expiresAt !== null && key.expiresAt <= now) {
        expiredAt = key.expiresAt
        key = undefined
        problem = 'expired'
      } else lastUsed.touch(key.id, now)
    }
    if (key === undefined && addressDecision !== undefined) {
      done(conclude(request, reply, key, problem, addressDecision, expiredAt))
      return
    }
    const identity = key !== undefined ? limiterIdentity(key) : addressIdentity(clientAddress(request))
    const quota = key ?? ANONYMOUS_QUOTA
    // A valid key's conditional read is counted only if its answer is not a 304 (auth/conditional-quota.ts).
    const deferred = key === undefined ? undefined : conditional.judge(request, reply, identity, quota)
    if (deferred !== undefined) {
      deferred.then(
        (decision) => done(conclude(request, reply, key, problem, decision, expiredAt)),
        (error: Error) => done(error),
      )
      return
    }
    if (limiter.consumeSync !== undefined) {
      done(conclude(request, reply, key, problem, limiter.consumeSync(identity, quota), expiredAt))
      return
    }
    limiter.consume(identity, quota).then(
      (decision) => done(conclude(request, reply, key, problem, decision, expiredAt)),
      (error: Error) => done(error),
    )
  }

  return (request, reply, done) => {
    const settings = settingsOf(request)
    if (settings.public === true) {
      done()
      return
    }
    if (settings.auth === 'admin' && admin !== undefined) return admin(request, reply, done)
    const header = request.headers.authorization
    if (header === undefined || header === '') return limit(request, reply, undefined, 'missing', done)
    const token = parseBearer(header)
    if (token === undefined) return limit(request, reply, undefined, 'malformed', done)
    const cached = keys.resolveCached(token)
    if (cached !== undefined) return limit(request, reply, cached || undefined, cached ? undefined : 'invalid', done)
    const lookUp = (decided?: LimitDecision) =>
      keys.resolve(token).then(
        (key) => limit(request, reply, key, key ? undefined : 'invalid', done, decided),
        (error: Error) => done(error),
      )
    // A key that may exist is looked up, whatever its address: if valid, its own plan decides.
    if (keys.mayExist(token)) return void lookUp()
    // One that cannot is asked about only if its address is not refused anyway (then storage is asked nothing).
    decideIfAddressRefused(limiter, addressIdentity(clientAddress(request))).then(
      (decided) => {
        if (decided !== undefined && !decided.allowed) return done(conclude(request, reply, undefined, 'invalid', decided, undefined))
        lookUp(decided)
      },
      (error: Error) => done(error),
    )
  }
}
