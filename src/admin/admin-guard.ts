import type { FastifyReply, FastifyRequest } from 'fastify'
import { addressIdentity } from '../auth/address-identity.js'
import { decideIfAddressRefused } from '../auth/address-precheck.js'
import { bearerChallenge, parseBearer } from '../auth/bearer.js'
import { refusal } from '../auth/guard.js'
import { setRateLimitHeaders } from '../auth/rate-limit-headers.js'
import { clientAddress } from '../http/client-address.js'
import type { Done, Step } from '../http/pipeline.js'
import type { LimitDecision, RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import { ApiError } from '../shared/errors.js'
import { ADMIN_QUOTA, ANONYMOUS_QUOTA } from '../shared/plans.js'
import type { AdminTokenRecord } from './admin-token-repository.js'
import { ADMIN_UNAUTHORIZED, type AdminAuthProblem, type AdminTokenResolver } from './admin-tokens.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin token an admin route was called with (set by the admin guard). */
    adminToken: AdminTokenRecord | null
    /**
     * The id of the admin token the request presented, once storage knows that token, whether or
     * not it was let through (revoked, over its limit): the access line names it.
     */
    presentedAdminTokenId?: string
  }
}

export interface AdminGuardOptions {
  tokens: AdminTokenResolver
  limiter: RateLimiter
  metrics: Metrics
}

/**
 * The guard of the admin routes (route config `auth: 'admin'`; auth/guard.ts hands them here):
 * authentication by admin token, then the same limiter, headers and 429s as /v1. A valid token is
 * limited per token at ADMIN_QUOTA; anything else per client address at the anonymous rates (the
 * same identity as keyless /v1 requests: guessing is slow on either surface), then refused 401.
 * A token that is not cached is looked up when it may exist (the filter of known secrets,
 * keys/known-secrets.ts), whatever its address; one that cannot only when its address is not
 * refused already (auth/address-precheck.ts): a limited or banned guesser costs storage nothing.
 */
export function createAdminGuard({ tokens, limiter, metrics }: AdminGuardOptions): Step {
  const conclude = (
    request: FastifyRequest,
    reply: FastifyReply,
    token: AdminTokenRecord | undefined,
    problem: AdminAuthProblem | undefined,
    decision: LimitDecision,
  ): ApiError | undefined => {
    setRateLimitHeaders(reply, decision)
    if (!decision.allowed) return refusal(request, decision, metrics, token ? { adminTokenId: token.id } : undefined)
    if (token !== undefined) {
      request.adminToken = token
      return undefined
    }
    return new ApiError('unauthorized', ADMIN_UNAUTHORIZED[problem!], {
      'www-authenticate': bearerChallenge(problem === 'missing' ? 'invalid_request' : 'invalid_token'),
    })
  }

  const limit = (
    request: FastifyRequest,
    reply: FastifyReply,
    token: AdminTokenRecord | undefined,
    problem: AdminAuthProblem | undefined,
    done: Done,
    /** The address's decision, already taken for this request (decideIfAddressRefused). */
    addressDecision?: LimitDecision,
  ) => {
    if (token === undefined && addressDecision !== undefined) {
      done(conclude(request, reply, token, problem, addressDecision))
      return
    }
    const identity = token !== undefined ? 'adm:' + token.id : addressIdentity(clientAddress(request))
    limiter.consume(identity, token !== undefined ? ADMIN_QUOTA : ANONYMOUS_QUOTA).then(
      (decision) => done(conclude(request, reply, token, problem, decision)),
      (error: Error) => done(error),
    )
  }

  return (request, reply, done) => {
    const header = request.headers.authorization
    if (header === undefined || header === '') return limit(request, reply, undefined, 'missing', done)
    const presented = parseBearer(header)
    if (presented === undefined) return limit(request, reply, undefined, 'malformed', done)
    const known = tokens.resolveCached(presented)
    if (known !== undefined) {
      request.presentedAdminTokenId = known.token?.id
      return limit(request, reply, known.token, known.problem, done)
    }
    const lookUp = (decided?: LimitDecision) =>
      tokens.resolve(presented).then(
        (result) => {
          request.presentedAdminTokenId = result.token?.id ?? result.revokedTokenId
          limit(request, reply, result.token, result.problem, done, decided)
        },
        (error: Error) => done(error),
      )
    // A token that may exist is looked up, whatever its address: if valid, the admin quota decides.
    if (tokens.mayExist(presented)) return void lookUp()
    // One that cannot is asked about only if its address is not refused anyway (then storage is asked nothing).
    decideIfAddressRefused(limiter, addressIdentity(clientAddress(request))).then(
      (decided) => {
        if (decided !== undefined && !decided.allowed) return done(conclude(request, reply, undefined, 'invalid', decided))
        lookUp(decided)
      },
      (error: Error) => done(error),
    )
  }
}
