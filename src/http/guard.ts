import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApiKeyRecord } from '../keys/api-key.js'
import type { KeyResolver } from '../keys/key-resolver.js'
import { ANONYMOUS_QUOTA } from '../keys/plans.js'
import type { RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import { bearerChallenge, parseBearer } from './auth.js'
import { addressIdentity } from './client-address.js'
import { ApiError } from './errors.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

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

/**
 * Authentication, then rate limiting, in one onRequest hook, so both run before the body is read
 * or validated: a keyless bad request is 401, and a flood is refused before it costs a parse.
 * A valid key is limited by its plan; anything else (no key, a malformed, unknown or revoked key)
 * is limited per client address at the Free plan's rates, which also throttles key guessing.
 */
export type Guard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

export function registerGuard(app: FastifyInstance, { keys, limiter, metrics, isPublicPath }: GuardOptions): Guard {
  app.decorateRequest('apiKey', null)
  const hook = async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions?.config ?? {}
    if (config.public || isPublicPath(request.url)) return
    const header = request.headers.authorization
    let problem: 'missing' | 'malformed' | 'invalid' | undefined
    let key: ApiKeyRecord | undefined
    if (header === undefined || header === '') problem = 'missing'
    else {
      const token = parseBearer(header)
      if (token === undefined) problem = 'malformed'
      else {
        key = await keys.resolve(token)
        if (key === undefined) problem = 'invalid'
      }
    }
    const decision =
      key !== undefined
        ? await limiter.consume('k:' + key.id, key)
        : await limiter.consume(addressIdentity(request.ip), ANONYMOUS_QUOTA)
    setRateLimitHeaders(reply, decision)
    if (!decision.allowed) {
      const banned = decision.reason === 'key_banned'
      metrics.rateLimited.inc({ code: banned ? 'key_banned' : 'rate_limited' })
      if (decision.banStarted) {
        metrics.bans.inc()
        request.log.warn({ keyId: key?.id, ip: key ? undefined : request.ip, seconds: decision.retryAfter }, 'temporary ban started')
      }
      const who = key ? 'This API key' : 'This client address'
      throw banned
        ? new ApiError('key_banned', `${who} is temporarily banned for sending while rate limited; retry after ${decision.retryAfter} s`)
        : new ApiError('rate_limited', `Rate limit exceeded; retry after ${decision.retryAfter} s`)
    }
    if (key !== undefined) request.apiKey = key
    else if (config.auth) {
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
  app.addHook('onRequest', hook)
  return hook
}
