import type { FastifyReply, FastifyRequest } from 'fastify'
import { type DeferredCount, isConditionalRead } from '../http/conditional-reads.js'
import type { LimitDecision, RateLimiter, UsageSnapshot } from '../limits/limiter.js'
import type { ApiError } from '../shared/errors.js'
import type { Quota } from '../shared/plans.js'
import type { LimitedAs } from './credential.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

/**
 * How many conditional reads a key may send per window, as a multiple of its plan's minute and
 * day limits, before they are counted like any other request (docs/limits.md).
 */
export const CONDITIONAL_FACTOR = 10

/** The secondary budget of a key's conditional reads: its own limiter identity, `c:<identity>`. */
export const conditionalIdentity = (identity: string): string => `c:${identity}`
export const conditionalBudget = (quota: Quota): Quota => ({
  perMinute: quota.perMinute * CONDITIONAL_FACTOR,
  perDay: quota.perDay * CONDITIONAL_FACTOR,
})

/** A valid credential's limiter identity, quota and name in logs (CredentialKind.limitedAs). */
type LimitedAsQuota = { identity: string; quota: Quota; who: LimitedAs; partitionKey?: string }

/** The headers of a request the limiter has not counted: the windows as the next request finds them. */
function uncounted(usage: UsageSnapshot): LimitDecision {
  const window = ({ limit, remaining, resetAt }: UsageSnapshot['minute']) => ({ limit, remaining, resetAt })
  return { allowed: true, now: usage.now, minute: window(usage.minute), day: window(usage.day), retryAfter: 0 }
}

/**
 * GitHub's rule for conditional requests: a 304 does not count against the rate limit. For a
 * valid key's conditional read (http/conditional-reads.ts), the guard asks `judge` instead of
 * counting: the request takes one unit of the key's secondary budget (`c:<identity>`, at
 * CONDITIONAL_FACTOR times the plan's limits, in the same limiter, so memory and Redis alike and
 * exact across instances with Redis) and, while the key's own windows have room and it is not
 * banned, is let through uncounted, with the headers of a peek. The route then counts it unless
 * it answers 304 (`request.deferredCount`). Past the secondary budget, or when the key's windows
 * are exhausted or banned, the request is counted at once as any other: a 429 stays a 429, and
 * sending on while limited still leads to a ban. The budget keeps 304s from being a free flood of
 * store reads: each one still costs the route's query and a hash.
 */
export class ConditionalQuota {
  constructor(
    private readonly limiter: RateLimiter,
    /** The 429 of a refused count (metrics, ban log), as the guard makes it. */
    private readonly refuse: (request: FastifyRequest, decision: LimitDecision, who: LimitedAs) => ApiError,
  ) {}

  /** The decision for a valid key's request, or undefined when it is no conditional read (the guard counts it as always). */
  judge(request: FastifyRequest, reply: FastifyReply, limitedAs: LimitedAsQuota): Promise<LimitDecision> | undefined {
    return isConditionalRead(request) ? this.decide(request, reply, limitedAs) : undefined
  }

  private async decide(request: FastifyRequest, reply: FastifyReply, limitedAs: LimitedAsQuota): Promise<LimitDecision> {
    const { identity, quota } = limitedAs
    const budget = await this.limiter.consume(conditionalIdentity(identity), conditionalBudget(quota))
    if (budget.allowed) {
      const usage = await this.limiter.peek(identity, quota)
      if (!usage.ban.active && usage.minute.remaining > 0 && usage.day.remaining > 0) {
        request.deferredCount = this.deferred(request, reply, limitedAs)
        return uncounted(usage)
      }
    }
    return this.limiter.consume(identity, quota)
  }

  private deferred(request: FastifyRequest, reply: FastifyReply, { identity, quota, who, partitionKey }: LimitedAsQuota): DeferredCount {
    return {
      count: async () => {
        request.deferredCount = null
        const decision = await this.limiter.consume(identity, quota)
        setRateLimitHeaders(reply, decision, partitionKey)
        request.limitOutcome = decision.allowed ? 'allowed' : (decision.reason ?? 'rate_limited')
        if (!decision.allowed) throw this.refuse(request, decision, who)
      },
      waive: () => {
        request.deferredCount = null
        // Nothing was counted: usage history's `allowed` stays the requests the quota counted.
        request.usageKeyId = null
      },
    }
  }
}
