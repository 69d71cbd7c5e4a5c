import type { FastifyReply } from 'fastify'
import type { LimitDecision, UsageSnapshot, WindowState } from '../limits/limiter.js'

/**
 * The window the X-RateLimit-* headers describe: the one with the fewest requests left; on a tie
 * the one that resets later (both must have room before the next request can pass).
 */
export function tightestWindow(d: LimitDecision): WindowState {
  const { minute, day } = d
  if (minute.remaining !== day.remaining) return minute.remaining < day.remaining ? minute : day
  return day.resetAt > minute.resetAt ? day : minute
}

/**
 * Unix seconds at which a refused request could pass: the later of the ban's end and the reset of
 * every exhausted window (a ban can end before an exhausted day does).
 */
function retryAt(d: LimitDecision, nowSeconds: number): number {
  let at = nowSeconds + d.retryAfter
  if (d.minute.remaining === 0) at = Math.max(at, d.minute.resetAt)
  if (d.day.remaining === 0) at = Math.max(at, d.day.resetAt)
  return at
}

/** Seconds a refused client must wait before a request can pass (Retry-After and the error message). */
export function secondsUntilRetry(d: LimitDecision): number {
  const nowSeconds = Math.floor(d.now / 1000)
  return retryAt(d, nowSeconds) - nowSeconds
}

/**
 * X-RateLimit-Limit / -Remaining / -Reset (Unix seconds) for the tightest window, plus the IETF
 * draft fields (draft-ietf-httpapi-ratelimit-headers-10): RateLimit-Policy lists both windows,
 * RateLimit gives each window's real remaining quota (r) and seconds to its reset (t). While
 * refused, X-RateLimit-Remaining is 0 and X-RateLimit-Reset and Retry-After are when a request can
 * pass again.
 *
 * A ban is not a window, so during one the windows keep their true counts (the draft's appendix
 * B.3 refuses with Retry-After while RateLimit shows the policy's real r) and RateLimit gets one
 * more item, "ban";r=0;t=<seconds to the ban's end>. The draft lets RateLimit report a limit that
 * RateLimit-Policy does not list (appendix B.1), so RateLimit-Policy stays the same on every
 * response (section 3: it SHOULD remain consistent), and a client that reads only RateLimit
 * still sees that nothing passes until the ban ends.
 *
 * A valid API key's items carry the draft's partition key, `pk=:<base64>:` (a byte sequence,
 * keys/api-key.ts partitionKey): the same for every key that shares the quota (a customer's keys,
 * a rotation chain), so a client can tell which of its keys draw on one quota. Keyless requests
 * and admin tokens have none.
 */
export function setRateLimitHeaders(reply: FastifyReply, d: LimitDecision, partitionKey?: string): void {
  const nowSeconds = Math.floor(d.now / 1000)
  const w = tightestWindow(d)
  const pk = partitionKey === undefined ? '' : `;pk=:${partitionKey}:`
  const windows =
    `"minute";r=${d.minute.remaining};t=${Math.max(0, d.minute.resetAt - nowSeconds)}${pk}, ` +
    `"day";r=${d.day.remaining};t=${Math.max(0, d.day.resetAt - nowSeconds)}${pk}`
  const banned = d.reason === 'key_banned'
  reply.headers({
    'x-ratelimit-limit': w.limit,
    'x-ratelimit-remaining': d.allowed ? w.remaining : 0,
    'x-ratelimit-reset': d.allowed ? w.resetAt : retryAt(d, nowSeconds),
    'ratelimit-policy': `"minute";q=${d.minute.limit};w=60${pk}, "day";q=${d.day.limit};w=86400${pk}`,
    ratelimit: banned ? `${windows}, "ban";r=0;t=${d.retryAfter}` : windows,
  })
  if (!d.allowed) reply.header('retry-after', secondsUntilRetry(d))
}

/**
 * The decision the next counted request would get from `usage`, counting nothing: refused while
 * banned (`key_banned`) or while a window is exhausted (`rate_limited`), else allowed.
 */
export function nextRequestDecision(usage: UsageSnapshot): LimitDecision {
  const window = ({ limit, remaining, resetAt }: UsageSnapshot['minute']) => ({ limit, remaining, resetAt })
  const decision: LimitDecision = { allowed: true, now: usage.now, minute: window(usage.minute), day: window(usage.day), retryAfter: 0 }
  const nowSeconds = Math.floor(usage.now / 1000)
  if (usage.ban.active && usage.ban.until !== null)
    return { ...decision, allowed: false, reason: 'key_banned', retryAfter: Math.max(0, usage.ban.until - nowSeconds) }
  if (usage.minute.remaining === 0 || usage.day.remaining === 0) {
    const resets = [usage.minute, usage.day].filter((w) => w.remaining === 0).map((w) => w.resetAt)
    return { ...decision, allowed: false, reason: 'rate_limited', retryAfter: Math.max(0, Math.max(...resets) - nowSeconds) }
  }
  return decision
}

/**
 * The headers of an answer about the quota itself (GET /v1/rate_limit): the rate-limit fields of
 * the decision the next counted request would get, so they agree with the body, but no
 * Retry-After: this answer is no refusal.
 */
export function setQuotaReadHeaders(reply: FastifyReply, usage: UsageSnapshot, partitionKey?: string): void {
  setRateLimitHeaders(reply, nextRequestDecision(usage), partitionKey)
  reply.removeHeader('retry-after')
}
