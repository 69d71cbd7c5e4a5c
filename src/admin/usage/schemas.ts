import { Type } from 'typebox'

/** What the usage history operations (history.ts, top.ts) share: their counts, range ends and words on lateness. */

/** What the usage history operations say of their numbers, once for both. */
export const USAGE_LATENESS =
  'Each instance counts in memory and writes its counts every USAGE_FLUSH_MS (default 5 s): the counts of the instance answering include what it has not written yet; other instances’ counts appear after their next write (up to one USAGE_FLUSH_MS late). ' +
  'Minute buckets are kept USAGE_MINUTE_RETENTION_HOURS (default 48 h), hour buckets USAGE_HOUR_RETENTION_DAYS (default 90 days). ' +
  'Only requests that presented a valid key are counted (not unknown, revoked or expired keys).'

export const count = (description: string) => Type.Integer({ minimum: 0, description })
export const usageCounts = {
  allowed: count('Requests the rate limiter let through (whatever their answer: 2xx, 4xx or 5xx).'),
  rateLimited: count('Requests refused 429 `rate_limited`.'),
  banned: count('Requests refused 429 `key_banned` (sent during a temporary ban).'),
}

// No `format` in request schemas: the validator has no formats; the handler parses the time.
export const rangeEnd = (which: 'from' | 'to', text: string) =>
  Type.String({
    maxLength: 64,
    description: `${text} An RFC 3339 date-time (e.g. 2030-01-01T10:00:00Z), truncated to the start of its bucket.`,
    example: which === 'from' ? '2030-01-01T09:00:00Z' : '2030-01-01T10:00:00Z',
  })

export const tags = ['usage']
