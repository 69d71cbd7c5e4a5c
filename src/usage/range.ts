import { invalid } from '../shared/refusal.js'
import { BUCKET_MS, bucketStart, type Granularity } from './counts.js'

/** The most buckets one history or top call covers: 24 h of minutes, 90 days of hours. */
export const MAX_BUCKETS: Record<Granularity, number> = { minute: 1440, hour: 2160 }
/** Buckets covered when `from` is not given: the last hour of minutes, the last day of hours. */
export const DEFAULT_BUCKETS: Record<Granularity, number> = { minute: 60, hour: 24 }

const SPAN_TEXT: Record<Granularity, string> = { minute: '24 h', hour: '90 days' }

/** A range of buckets: from inclusive, to exclusive, both bucket starts (Unix ms). */
export interface BucketRange {
  granularity: Granularity
  from: number
  to: number
}

/**
 * The buckets a call asks for. `from` and `to` (Unix ms, parsed from RFC 3339) are truncated to the
 * start of their bucket; `to` defaults to the start of the bucket after the current one (so the
 * current one is included), `from` to DEFAULT_BUCKETS before `to`. Reversed, empty or wider than
 * MAX_BUCKETS is an `invalid` refusal naming the field.
 */
export function bucketRange(granularity: Granularity, from: number | undefined, to: number | undefined, now: number): BucketRange {
  const size = BUCKET_MS[granularity]
  const end = to === undefined ? bucketStart(now, size) + size : bucketStart(to, size)
  const start = from === undefined ? end - DEFAULT_BUCKETS[granularity] * size : bucketStart(from, size)
  if (start >= end) {
    throw invalid(
      'from',
      (name) =>
        `${name('from')} must be earlier than ${name('to')} (after truncation to the ${granularity}): ranges are ${name('from')} inclusive, ${name('to')} exclusive`,
    )
  }
  const buckets = (end - start) / size
  if (buckets > MAX_BUCKETS[granularity]) {
    const field = from === undefined ? 'to' : 'from'
    throw invalid(
      field,
      (name) =>
        `${name(field)}: ${name('from')} and ${name('to')} span ${buckets} ${granularity}s; at most ${MAX_BUCKETS[granularity]} (${SPAN_TEXT[granularity]}) per call`,
    )
  }
  return { granularity, from: start, to: end }
}
