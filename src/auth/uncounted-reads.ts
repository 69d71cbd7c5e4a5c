import type { FastifyReply, FastifyRequest } from 'fastify'
import { type DeferredCount, isConditionalRead } from '../http/conditional-reads.js'
import { settingsOf } from '../http/route-settings.js'
import type { LimitDecision, RateLimiter, UsageSnapshot } from '../limits/limiter.js'
import type { ApiError } from '../shared/errors.js'
import type { Quota } from '../shared/plans.js'
import type { LimitedAs } from './credential.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** On a route with `config.quotaRead`, for a valid key: its windows after the guard's decision (null otherwise). */
    quotaRead: QuotaRead | null
  }
}

/** What a quota read answers (rate-limit/routes.ts): the key's windows as the next counted request finds them, and its budget. */
export interface QuotaRead {
  usage: UsageSnapshot
  /** The decision on this request's unit of the quota-read budget (`r:<identity>`): refused once it is spent. */
  budget: LimitDecision
  /** The credential's partition key (the headers' `pk`). */
  partitionKey?: string
}

/**
 * How many conditional reads a key may send per window, as a multiple of its plan's minute and
 * day limits, before they are counted like any other request (docs/limits.md).
 */
export const CONDITIONAL_FACTOR = 10

/**
 * The secondary budgets, each its own limiter identity: the credential's identity behind a prefix
 * of one kind (`c:` conditional reads, `r:` quota reads), so every key of one quota (a customer's,
 * a rotation chain) shares the budget as it shares the quota. No collision with any identity:
 * identities start with `k:`, `c:cus_`, `a:`, `o:` or `adm:`, so `c:k:…`, `c:c:…`, `c:adm:…`
 * (never `c:cus_…`, a customer's quota) and `r:…` (no identity starts with `r:`) are budgets only.
 */
export const conditionalIdentity = (identity: string): string => `c:${identity}`
export const quotaReadIdentity = (identity: string): string => `r:${identity}`
export const conditionalBudget = (quota: Quota): Quota => ({
  perMinute: quota.perMinute * CONDITIONAL_FACTOR,
  perDay: quota.perDay * CONDITIONAL_FACTOR,
})

/** A valid credential's limiter identity, quota and name in logs (CredentialKind.limitedAs). */
type LimitedAsQuota = { identity: string; quota: Quota; who: LimitedAs; partitionKey?: string }

/** The guard's decision on an uncounted read, and whether usage history leaves the request out (nothing was counted). */
export interface UncountedDecision {
  decision: LimitDecision
  unrecorded: boolean
}

/** The headers of a request the limiter has not counted: the windows as the next request finds them. */
function uncounted(usage: UsageSnapshot): LimitDecision {
  const window = ({ limit, remaining, resetAt }: UsageSnapshot['minute']) => ({ limit, remaining, resetAt })
  return { allowed: true, now: usage.now, minute: window(usage.minute), day: window(usage.day), retryAfter: 0 }
}

/**
 * Reads that do not count against a valid key's minute and day quota, each kind within a
 * secondary budget of its own (its own limiter identity, in the same limiter: memory and Redis
 * alike, exact across instances with Redis). Past its budget a read is counted at once as any
 * other request: a 429 stays a 429, and sending on while limited still leads to a ban. The budget
 * keeps uncounted reads from being a free flood.
 *
 * Conditional reads (http/conditional-reads.ts), GitHub's rule that a 304 does not count: the
 * budget is CONDITIONAL_FACTOR times the plan's limits (`c:<identity>`) and, while the key's own
 * windows have room and it is not banned, the request is let through uncounted, with the headers
 * of a peek. The route then counts it unless it answers 304 (`request.deferredCount`); when the
 * key's windows are exhausted or banned, it is counted at once.
 *
 * Quota reads (a route with `config.quotaRead`: GET /v1/rate_limit), GitHub's GET /rate_limit:
 * the budget is the plan's own limits (`r:<identity>`), and within it the read is answered
 * uncounted even while the key's windows are exhausted or it is banned (when a client needs it
 * most); it is left out of usage history, as a 304 is. `request.quotaRead` holds what it answers.
 */
export class UncountedReads {
  constructor(
    private readonly limiter: RateLimiter,
    /** The 429 of a refused count (metrics, ban log), as the guard makes it. */
    private readonly refuse: (request: FastifyRequest, decision: LimitDecision, who: LimitedAs) => ApiError,
  ) {}

  /** The decision for a valid credential's request, or undefined when it is no uncounted read (the guard counts it as always). */
  judge(request: FastifyRequest, reply: FastifyReply, limitedAs: LimitedAsQuota): Promise<UncountedDecision> | undefined {
    if (settingsOf(request).quotaRead === true) return this.quotaRead(request, limitedAs)
    return isConditionalRead(request) ? this.conditional(request, reply, limitedAs) : undefined
  }

  private async conditional(request: FastifyRequest, reply: FastifyReply, limitedAs: LimitedAsQuota): Promise<UncountedDecision> {
    const { identity, quota } = limitedAs
    const budget = await this.limiter.consume(conditionalIdentity(identity), conditionalBudget(quota))
    if (budget.allowed) {
      const usage = await this.limiter.peek(identity, quota)
      if (!usage.ban.active && usage.minute.remaining > 0 && usage.day.remaining > 0) {
        request.deferredCount = this.deferred(request, reply, limitedAs)
        return { decision: uncounted(usage), unrecorded: false }
      }
    }
    return { decision: await this.limiter.consume(identity, quota), unrecorded: false }
  }

  private async quotaRead(request: FastifyRequest, { identity, quota, partitionKey }: LimitedAsQuota): Promise<UncountedDecision> {
    const budget = await this.limiter.consume(quotaReadIdentity(identity), quota)
    if (budget.allowed) {
      const usage = await this.limiter.peek(identity, quota)
      request.quotaRead = { usage, budget, partitionKey }
      return { decision: uncounted(usage), unrecorded: true }
    }
    const decision = await this.limiter.consume(identity, quota)
    // Counted and let through: the answer shows the windows with this request in them.
    if (decision.allowed) request.quotaRead = { usage: await this.limiter.peek(identity, quota), budget, partitionKey }
    return { decision, unrecorded: false }
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
