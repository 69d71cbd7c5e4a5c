import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientAddress } from '../http/client-address.js'
import type { LimitDecision, RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import type { ApiError } from '../shared/errors.js'
import { ANONYMOUS_QUOTA } from '../shared/plans.js'
import { addressIdentity } from './address-identity.js'
import { decideIfAddressRefused } from './address-precheck.js'
import { refusal } from './guard.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

/**
 * The limit of a public route that checks a credential the guard cannot (GitHub's signature over
 * the body of a secret scanning report): what it refuses counts against the client address as a
 * request without a valid API key does in the guard (the same identity, the Free plan's rates), so
 * a refused address is answered 429, and one that keeps sending is banned. What passes the route's
 * check is not counted: GitHub sends its reports from a few addresses, and a burst of them must not
 * get those limited.
 *
 * `precheck` runs before the body is read: an address refused already is answered 429 (counted,
 * as every refused request is: that is what starts and extends a ban) and nothing of its body is
 * read. `refuse` counts a request the route's check refused and gives the answer: the 429 if the
 * address is now refused, otherwise the route's own error (`count` when the route has none).
 */
export class AddressRefusals {
  /** A request that precheck counted already (a refusal lifted between its peek and its count): not counted twice. */
  private readonly counted = new WeakMap<FastifyRequest, LimitDecision>()

  constructor(
    private readonly limiter: RateLimiter,
    private readonly metrics: Metrics,
  ) {}

  /** Throws the 429 when the request's address is refused already. */
  async precheck(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const decided = await decideIfAddressRefused(this.limiter, identityOf(request))
    if (decided === undefined) return
    setRateLimitHeaders(reply, decided)
    if (!decided.allowed) throw refusal(request, decided, this.metrics, undefined)
    this.counted.set(request, decided)
  }

  /** Counts the request against its address: the 429 to answer with if that refuses it. */
  async count(request: FastifyRequest, reply: FastifyReply): Promise<ApiError | undefined> {
    const identity = identityOf(request)
    const decision =
      this.counted.get(request) ??
      this.limiter.consumeSync?.(identity, ANONYMOUS_QUOTA) ??
      (await this.limiter.consume(identity, ANONYMOUS_QUOTA))
    this.counted.set(request, decision)
    setRateLimitHeaders(reply, decision)
    return decision.allowed ? undefined : refusal(request, decision, this.metrics, undefined)
  }

  /** A request the route refused with `error`: counted, and what to answer (the 429, or `error`). */
  async refuse(request: FastifyRequest, reply: FastifyReply, error: ApiError): Promise<ApiError> {
    return (await this.count(request, reply)) ?? error
  }
}

const identityOf = (request: FastifyRequest) => addressIdentity(clientAddress(request))
