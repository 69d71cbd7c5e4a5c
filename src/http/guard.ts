import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApiKeyRecord } from '../keys/api-key.js'
import type { KeyResolver } from '../keys/key-resolver.js'
import { ANONYMOUS_QUOTA } from '../keys/plans.js'
import type { LimitDecision, RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import { bearerChallenge, parseBearer } from './auth.js'
import { addressIdentity } from './client-address.js'
import { ApiError } from './errors.js'
import { secondsUntilRetry, setRateLimitHeaders } from './rate-limit-headers.js'

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null
  }
  interface FastifyContextConfig {
    /** The operation needs a valid API key. */
    auth?: boolean
    /** Public endpoint (health, metrics, docs): neither authenticated nor rate-limited. */
    public?: boolean
  }
}

export interface GuardOptions {
  keys: KeyResolver
  limiter: RateLimiter
  metrics: Metrics
  isPublicPath: (url: string) => boolean
}

type Problem = 'missing' | 'malformed' | 'invalid'

/**
 * Authentication, then rate limiting, in one onRequest hook, so both run before the body is read
 * or validated: a keyless bad request is 401, and a flood is refused before it costs a parse.
 * A valid key is limited by its plan; anything else (no key, a malformed, unknown or revoked key)
 * is limited per client address at the Free plan's rates, which also throttles key guessing.
 *
 * The hook is callback-style with a synchronous fast path: a cached key and the in-memory limiter
 * need no promise at all (this runs on every request); storage lookups and Redis go async.
 */
export type Guard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

export function registerGuard(app: FastifyInstance, { keys, limiter, metrics, isPublicPath }: GuardOptions): Guard {
  app.decorateRequest('apiKey', null)

  /** Applies a limiter decision and the authentication outcome; throws the ApiError to answer with. */
  const conclude = (request: FastifyRequest, reply: FastifyReply, key: ApiKeyRecord | undefined, problem: Problem | undefined, decision: LimitDecision) => {
    setRateLimitHeaders(reply, decision)
    if (!decision.allowed) {
      const banned = decision.reason === 'key_banned'
      metrics.rateLimited.inc({ code: banned ? 'key_banned' : 'rate_limited' })
      if (decision.banStarted) {
        metrics.bans.inc()
        request.log.warn({ keyId: key?.id, ip: key ? undefined : request.ip, seconds: decision.retryAfter }, 'temporary ban started')
      }
      const who = key ? 'This API key' : 'This client address'
      const wait = secondsUntilRetry(decision)
      throw banned
        ? new ApiError('key_banned', `${who} is temporarily banned for sending while rate limited; retry after ${wait} s`)
        : new ApiError('rate_limited', `Rate limit exceeded; retry after ${wait} s`)
    }
    if (key !== undefined) request.apiKey = key
    else if (request.routeOptions.config?.auth) {
      const message =
        problem === 'missing'
          ? 'Missing API key: send Authorization: Bearer <API key>'
          : problem === 'malformed'
            ? 'Malformed Authorization header: expected Bearer <API key>'
            : 'Invalid or revoked API key'
      throw new ApiError('unauthorized', message, {
        'www-authenticate': bearerChallenge(problem === 'missing' ? 'invalid_request' : 'invalid_token'),
      })
    }
  }

  const limit = (request: FastifyRequest, reply: FastifyReply, key: ApiKeyRecord | undefined, problem: Problem | undefined, done: (err?: Error) => void) => {
    const identity = key !== undefined ? 'k:' + key.id : addressIdentity(request.ip)
    const quota = key ?? ANONYMOUS_QUOTA
    if (limiter.consumeSync !== undefined) {
      try {
        conclude(request, reply, key, problem, limiter.consumeSync(identity, quota))
      } catch (error) {
        done(error as Error)
        return
      }
      done()
      return
    }
    limiter.consume(identity, quota).then(
      (decision) => {
        try {
          conclude(request, reply, key, problem, decision)
        } catch (error) {
          done(error as Error)
          return
        }
        done()
      },
      (error: Error) => done(error),
    )
  }

  const hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const config = request.routeOptions?.config ?? {}
    if (config.public || isPublicPath(request.url)) {
      done()
      return
    }
    const header = request.headers.authorization
    if (header === undefined || header === '') return limit(request, reply, undefined, 'missing', done)
    const token = parseBearer(header)
    if (token === undefined) return limit(request, reply, undefined, 'malformed', done)
    const cached = keys.resolveCached(token)
    if (cached !== undefined) return limit(request, reply, cached || undefined, cached ? undefined : 'invalid', done)
    keys.resolve(token).then(
      (key) => limit(request, reply, key, key ? undefined : 'invalid', done),
      (error: Error) => done(error),
    )
  }
  app.addHook('onRequest', hook)
  return (request, reply) => new Promise<void>((resolve, reject) => hook(request, reply, (err) => (err ? reject(err) : resolve())))
}
