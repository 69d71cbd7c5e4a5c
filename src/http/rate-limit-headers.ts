import type { FastifyReply } from 'fastify'
import type { LimitDecision, WindowState } from '../limits/limiter.js'

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
 * X-RateLimit-Limit / -Remaining / -Reset (Unix seconds) for the tightest window, plus the IETF
 * draft fields (draft-ietf-httpapi-ratelimit-headers-10): RateLimit-Policy lists both windows,
 * RateLimit gives each window's remaining quota (r) and seconds to reset (t). While refused, the
 * remaining count is 0 and the reset is when a retry can pass (the ban's end while banned).
 */
export function setRateLimitHeaders(reply: FastifyReply, d: LimitDecision): void {
  const nowSeconds = Math.floor(d.now / 1000)
  const w = tightestWindow(d)
  const refused = !d.allowed
  const reset = refused ? nowSeconds + d.retryAfter : w.resetAt
  const minuteLeft = refused && d.reason === 'key_banned' ? 0 : d.minute.remaining
  const dayLeft = refused && d.reason === 'key_banned' ? 0 : d.day.remaining
  const minuteT = Math.max(0, (refused && d.reason === 'key_banned' ? reset : d.minute.resetAt) - nowSeconds)
  const dayT = Math.max(0, (refused && d.reason === 'key_banned' ? reset : d.day.resetAt) - nowSeconds)
  reply.headers({
    'x-ratelimit-limit': w.limit,
    'x-ratelimit-remaining': refused ? 0 : w.remaining,
    'x-ratelimit-reset': reset,
    'ratelimit-policy': `"minute";q=${d.minute.limit};w=60, "day";q=${d.day.limit};w=86400`,
    ratelimit: `"minute";r=${minuteLeft};t=${minuteT}, "day";r=${dayLeft};t=${dayT}`,
  })
  if (refused) reply.header('retry-after', d.retryAfter)
}
