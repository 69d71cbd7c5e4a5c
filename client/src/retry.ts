/** How a call retries. Every field has a default (DEFAULT_RETRY_POLICY); all times in milliseconds. */
export interface RetryPolicy {
  /** Retries after the first attempt (0: never retry). */
  maxRetries: number
  /** The first backoff step; step n is baseDelayMs * 2^n, capped at maxDelayMs. */
  baseDelayMs: number
  /** The cap of one backoff step. */
  maxDelayMs: number
  /** The overall deadline of a call, from its start, waits and retries included. */
  deadlineMs: number
  /** One HTTP attempt is cut off after this long (and counts as a network error). */
  attemptTimeoutMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 5,
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  deadlineMs: 60_000,
  attemptTimeoutMs: 10_000,
}

/** setTimeout fires at once beyond this (2^31 - 1 ms, about 24.8 days): no wait may be longer. */
export const MAX_TIMER_MS = 2 ** 31 - 1

export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...overrides }
  for (const [name, value] of Object.entries(policy)) {
    const integer = name === 'maxRetries'
    const ok = Number.isFinite(value) && value >= 0 && value <= (integer ? 100 : MAX_TIMER_MS) && (!integer || Number.isInteger(value))
    if (!ok)
      throw new RangeError(
        `retry.${name} must be ${integer ? 'an integer from 0 to 100' : `a number of milliseconds from 0 to ${MAX_TIMER_MS}`}, got ${value}`,
      )
  }
  return policy
}

/** Full jitter (AWS, "Exponential Backoff and Jitter"): uniform in [0, min(cap, base * 2^retry)). */
export function fullJitter(policy: RetryPolicy, retry: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(retry, 52))
  return Math.floor(random() * ceiling)
}

const DELTA_SECONDS = /^\d+$/
// RFC 9110 5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms a recipient must accept.
const HTTP_DATE = [
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
]

/** The latest time a Date can hold; a larger Retry-After is clamped to it. */
const MAX_DATE_MS = 8.64e15

/**
 * When the server says a retry may pass, as an absolute time (ms since the epoch): Retry-After as
 * delta-seconds or an HTTP date; failing that, and only when `rateLimitReset` is set (a 429),
 * X-RateLimit-Reset (Unix seconds). Anything else (garbage, negative or fractional numbers, a date
 * in another format) is ignored: undefined. A time in the past means "now".
 */
export function serverRetryAt(headers: Headers, now: number, rateLimitReset: boolean): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim()
  if (retryAfter !== undefined) {
    if (DELTA_SECONDS.test(retryAfter)) return Math.min(MAX_DATE_MS, now + Number(retryAfter) * 1000)
    if (HTTP_DATE.some((format) => format.test(retryAfter))) {
      const at = Date.parse(retryAfter.endsWith(' GMT') ? retryAfter : `${retryAfter} GMT`)
      if (Number.isFinite(at)) return Math.max(now, at)
    }
  }
  const reset = rateLimitReset ? headers.get('x-ratelimit-reset')?.trim() : undefined
  if (reset !== undefined && DELTA_SECONDS.test(reset)) return Math.min(MAX_DATE_MS, Math.max(now, Number(reset) * 1000))
  return undefined
}
