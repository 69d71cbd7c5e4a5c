/**
 * What usage history counts, per key and per bucket (a UTC minute or hour): how the rate limiter
 * decided (allowed, rateLimited, banned) and the class of the answer (2xx, 4xx, 5xx). Every counted
 * request adds 1 to one decision and to at most one class (1xx/3xx answers have none), so
 * allowed + rateLimited + banned == status2xx + status4xx + status5xx when the service answers
 * neither 1xx nor 3xx (to a keyed request, its only 3xx is the 304 of a conditional read, which is
 * left out unless it was counted against the quota: auth/uncounted-reads.ts).
 */
export const COUNTERS = ['allowed', 'rateLimited', 'banned', 'status2xx', 'status4xx', 'status5xx'] as const
export type Counter = (typeof COUNTERS)[number]
export type UsageCounts = Record<Counter, number>

/** Index of each counter in a cell (a Float64Array of COUNTERS.length, the recorder's unit of memory). */
export const ALLOWED = 0
export const RATE_LIMITED = 1
export const BANNED = 2
const STATUS_CLASS_BASE = 3

export const MINUTE_MS = 60_000
export const HOUR_MS = 3_600_000
export type Granularity = 'minute' | 'hour'
export const BUCKET_MS: Record<Granularity, number> = { minute: MINUTE_MS, hour: HOUR_MS }

/** The start of the bucket holding `ms` (UTC: the epoch starts on a minute and an hour). */
export const bucketStart = (ms: number, size: number): number => ms - (((ms % size) + size) % size)

/** The limiter's verdict on a request, as the guard saw it. */
export type LimitOutcome = 'allowed' | 'rate_limited' | 'key_banned'

/** Index of the decision counter. */
export const decisionIndex = (outcome: LimitOutcome): number =>
  outcome === 'allowed' ? ALLOWED : outcome === 'rate_limited' ? RATE_LIMITED : BANNED

/** Index of the status-class counter, or -1 for a status outside 2xx/4xx/5xx. */
export function statusClassIndex(status: number): number {
  const hundreds = (status / 100) | 0
  if (hundreds === 2) return STATUS_CLASS_BASE
  if (hundreds === 4) return STATUS_CLASS_BASE + 1
  if (hundreds === 5) return STATUS_CLASS_BASE + 2
  return -1
}

export const zeroCounts = (): UsageCounts => ({ allowed: 0, rateLimited: 0, banned: 0, status2xx: 0, status4xx: 0, status5xx: 0 })

/** A cell as named counts. */
export function countsOf(cell: ArrayLike<number>): UsageCounts {
  return {
    allowed: cell[0]!,
    rateLimited: cell[1]!,
    banned: cell[2]!,
    status2xx: cell[3]!,
    status4xx: cell[4]!,
    status5xx: cell[5]!,
  }
}

/** Adds `b` into `a` (both named counts). */
export function addCounts(a: UsageCounts, b: UsageCounts): UsageCounts {
  for (const c of COUNTERS) a[c] += b[c]
  return a
}
