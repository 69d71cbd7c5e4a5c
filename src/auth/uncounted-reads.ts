import type { FastifyReply, FastifyRequest } from 'fastify'
import { isConditionalRead } from '../http/conditional-reads.js'
import { toApiError } from '../http/error-handler.js'
import { settingsOf } from '../http/route-settings.js'
import type { LimitDecision, RateLimiter, UsageSnapshot } from '../limits/limiter.js'
import { bodyOf } from '../shared/error-body.js'
import type { ApiError } from '../shared/errors.js'
import type { Quota } from '../shared/plans.js'
import type { ApiKeyAdmission, KeyUsage, Limits, Presented, QuotaRead } from './admission.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

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

/** The guard's decision on an uncounted read: the headers' decision, how the request counts, and what a quota read answers. */
export interface UncountedDecision {
  decision: LimitDecision
  usage: KeyUsage
  quotaRead?: QuotaRead
}

/** The headers of a request the limiter has not counted: the windows as the next request finds them. */
function uncounted(usage: UsageSnapshot): LimitDecision {
  const window = ({ limit, remaining, resetAt }: UsageSnapshot['minute']) => ({ limit, remaining, resetAt })
  return { allowed: true, now: usage.now, minute: window(usage.minute), day: window(usage.day), retryAfter: 0 }
}

/** What Fastify sets for a serialized body (and the conditional reads for theirs). */
const JSON_UTF8 = 'application/json; charset=utf-8'

type OnSendDone = (error: null, payload: unknown) => void

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
 * of a peek, its admission `deferred`: its answer settles it (`settle`, the one onSend hook), so
 * the route only decides 304 or 200 and never counts anything. When the key's windows are
 * exhausted or banned, it is counted at once.
 *
 * Quota reads (a route with `config.quotaRead`: GET /v1/rate_limit), GitHub's GET /rate_limit:
 * the budget is the plan's own limits (`r:<identity>`), and within it the read is answered
 * uncounted even while the key's windows are exhausted or it is banned (when a client needs it
 * most); it is left out of usage history, as a 304 is. The admission's `quotaRead` holds what it answers.
 */
export class UncountedReads {
  constructor(
    private readonly limiter: RateLimiter,
    /** The 429 of a refused count (metrics, ban log), as the guard makes it. */
    private readonly refuse: (request: FastifyRequest, decision: LimitDecision, who: Presented) => ApiError,
  ) {}

  /** The decision for a valid credential's request, or undefined when it is no uncounted read (the guard counts it as always). */
  judge(request: FastifyRequest, limits: Limits): Promise<UncountedDecision> | undefined {
    if (settingsOf(request).quotaRead === true) return this.quotaRead(limits)
    return isConditionalRead(request) ? this.conditional(limits) : undefined
  }

  private async conditional({ identity, quota }: Limits): Promise<UncountedDecision> {
    const budget = await this.limiter.consume(conditionalIdentity(identity), conditionalBudget(quota))
    if (budget.allowed) {
      const usage = await this.limiter.peek(identity, quota)
      if (!usage.ban.active && usage.minute.remaining > 0 && usage.day.remaining > 0)
        return { decision: uncounted(usage), usage: 'deferred' }
    }
    return { decision: await this.limiter.consume(identity, quota), usage: 'counted' }
  }

  private async quotaRead({ identity, quota, partitionKey }: Limits): Promise<UncountedDecision> {
    const budget = await this.limiter.consume(quotaReadIdentity(identity), quota)
    if (budget.allowed) {
      const usage = await this.limiter.peek(identity, quota)
      return { decision: uncounted(usage), usage: 'uncounted', quotaRead: { usage, budget, partitionKey } }
    }
    const decision = await this.limiter.consume(identity, quota)
    // Counted and let through: the answer shows the windows with this request in them.
    if (!decision.allowed) return { decision, usage: 'counted' }
    return { decision, usage: 'counted', quotaRead: { usage: await this.limiter.peek(identity, quota), budget, partitionKey } }
  }

  /**
   * onSend: settles a deferred conditional read by its answer. A 304 (the route found the tag
   * named) leaves it uncounted, in the limiter and in usage history; any other answer (the 200,
   * or an error raised before the route answered: a bad parameter, a 404, a 403 of its scope) is
   * counted now, with the headers of that count, and should the quota refuse it the answer becomes
   * that 429, as it would have been had the guard counted the request. A callback, not an async
   * hook: every other answer passes without a promise.
   */
  readonly settle = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: OnSendDone): void => {
    const admission = request.admission
    if (admission === null || admission.kind !== 'apiKey' || admission.usage !== 'deferred') {
      done(null, payload)
      return
    }
    if (reply.statusCode === 304) {
      admission.usage = 'uncounted'
      done(null, payload)
      return
    }
    // Counted from here on, whatever the limiter answers (a failing limiter leaves the guard's verdict).
    admission.usage = 'counted'
    this.count(request, reply, admission).then(
      (refused) => done(null, refused === undefined ? payload : answerInstead(request, reply, refused)),
      (error: unknown) => done(null, answerInstead(request, reply, error)),
    )
  }

  /** Counts a settled read against its key's quota: the 429 when the quota refuses it. */
  private async count(request: FastifyRequest, reply: FastifyReply, admission: ApiKeyAdmission): Promise<ApiError | undefined> {
    const { identity, quota, who, partitionKey } = admission.limits
    const decision = await this.limiter.consume(identity, quota)
    admission.decision = decision
    setRateLimitHeaders(reply, decision, partitionKey)
    return decision.allowed ? undefined : this.refuse(request, decision, who)
  }
}

/**
 * The error answer that replaces a settled read's payload, with the Error schema's bytes (its
 * three fields in this order), the same answer, header for header, as when the route counted the
 * read itself: in place of its 200, as http/error-handler.ts (sendError) answers an error a route
 * throws (its type last); in place of an error answered before the route ran, with that answer's type.
 */
function answerInstead(request: FastifyRequest, reply: FastifyReply, error: unknown): string {
  const refused = toApiError(error)
  if (refused.code === 'internal_error') request.log.error({ err: error }, 'request failed')
  if (reply.statusCode < 300) reply.removeHeader('content-type')
  reply.code(refused.status).headers(refused.headers).type(JSON_UTF8)
  return JSON.stringify(bodyOf(refused))
}
