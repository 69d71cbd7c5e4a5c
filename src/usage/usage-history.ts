import type { ChangeContext } from '../changes/audit-log.js'
import type { ChangeRecorder } from '../changes/change-recorder.js'
import type { KeyRepository } from '../keys/repository.js'
import type { Clock } from '../shared/clock.js'
import { notFound } from '../shared/refusal.js'
import { addCounts, BUCKET_MS, type Granularity, type UsageCounts, zeroCounts } from './counts.js'
import { bucketRange } from './range.js'
import type { UsageRecorder } from './recorder.js'
import type { KeyTotals, TopMeasure, UsageBucket, UsageRepository } from './repository.js'

export type HistoryScope = 'key' | 'chain'

export interface HistoryQuery {
  granularity: Granularity
  scope: HistoryScope
  /** Unix ms; undefined: the default (see bucketRange). */
  from?: number
  to?: number
}

export interface TopUsageQuery {
  from?: number
  to?: number
  by: TopMeasure
  limit: number
}

export const TOP_LIMIT = { min: 1, max: 100, default: 10 } as const

/** Requests counted: every decision (allowed, rate limited, banned). */
export const requestsOf = (c: UsageCounts) => c.allowed + c.rateLimited + c.banned
const measureOf = (by: TopMeasure, c: UsageCounts) => (by === 'requests' ? requestsOf(c) : c.rateLimited)

export interface UsageHistoryOptions {
  usage: UsageRepository
  keys: Pick<KeyRepository, 'findKeyById'>
  /** Puts the reads with a ChangeContext on the audit log (changes/). */
  recorder: ChangeRecorder
  clock: Clock
  /** This process's counts not yet stored (the main app's recorder), merged into every answer. */
  pending?: Pick<UsageRecorder, 'pendingBuckets' | 'pendingTotals'>
}

/**
 * Reads usage history for the admin API: stored rows plus this process's pending counts (other
 * instances' appear after their next flush), zero-filled so a chart draws the answer as it is.
 * A read with a ChangeContext is on the audit log, like the key service's reads.
 */
export class UsageHistory {
  constructor(private readonly options: UsageHistoryOptions) {}

  /** Every bucket of the range, oldest first, zeros included; a `not_found` refusal for an unknown key. */
  async history(keyId: string, query: HistoryQuery, ctx?: ChangeContext): Promise<UsageBucket[]> {
    const { usage, keys } = this.options
    const key = await keys.findKeyById(keyId)
    if (key === undefined) throw notFound('key', keyId)
    const ids = query.scope === 'chain' ? await usage.quotaKeyIds(key.quotaId) : [key.id]
    const { range, buckets } = await this.keysHistory(ids, query)
    await this.record(ctx, 'key.usage_history', key.id, {
      granularity: query.granularity,
      scope: query.scope,
      from: range.from,
      to: range.to,
    })
    return buckets
  }

  /**
   * Every bucket of the range summed over `ids` (stored and pending), oldest first, zeros included;
   * not on the audit log (the caller's read is): a key's, a chain's, a customer's keys'.
   */
  async keysHistory(
    ids: readonly string[],
    query: Omit<HistoryQuery, 'scope'>,
  ): Promise<{ range: { from: number; to: number }; buckets: UsageBucket[] }> {
    const { usage, clock, pending } = this.options
    const range = bucketRange(query.granularity, query.from, query.to, clock.now())
    const size = BUCKET_MS[query.granularity]
    const stored = ids.length === 0 ? [] : await usage.history(ids, query.granularity, range.from, range.to)
    const unstored = pending?.pendingBuckets(ids, size, range.from, range.to)
    const byStart = new Map(stored.map((b) => [b.start, b.counts]))
    const buckets: UsageBucket[] = []
    for (let start = range.from; start < range.to; start += size) {
      const counts = zeroCounts()
      const s = byStart.get(start)
      if (s !== undefined) addCounts(counts, s)
      const p = unstored?.get(start)
      if (p !== undefined) addCounts(counts, p)
      buckets.push({ start, counts })
    }
    return { range, buckets }
  }

  /**
   * The keys with the most of `by` over whole hours, most first (then by keyId); keys with none of
   * it are left out. Exact with pending counts: a key outside the stored top that has none pending
   * cannot overtake, so the stored top plus the pending keys are the only candidates.
   */
  async top(query: TopUsageQuery, ctx?: ChangeContext): Promise<{ from: number; to: number; keys: KeyTotals[] }> {
    const { usage, clock, pending } = this.options
    const range = bucketRange('hour', query.from, query.to, clock.now())
    const stored = await usage.top({ from: range.from, to: range.to, by: query.by, limit: query.limit })
    const unstored = pending?.pendingTotals(range.from, range.to) ?? new Map<string, UsageCounts>()
    const candidates = new Map(stored.map((k) => [k.keyId, { ...k, counts: { ...k.counts } }]))
    const missing = [...unstored.keys()].filter((id) => !candidates.has(id))
    if (missing.length > 0) {
      for (const k of await usage.top({ from: range.from, to: range.to, by: query.by, limit: missing.length, keyIds: missing }))
        candidates.set(k.keyId, k)
    }
    for (const [id, counts] of unstored) {
      const candidate = candidates.get(id)
      if (candidate !== undefined) addCounts(candidate.counts, counts)
    }
    const keys = [...candidates.values()]
      .filter((k) => measureOf(query.by, k.counts) > 0)
      .sort((a, b) => measureOf(query.by, b.counts) - measureOf(query.by, a.counts) || (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0))
      .slice(0, query.limit)
    await this.record(ctx, 'usage.top', null, { from: range.from, to: range.to, by: query.by, limit: query.limit })
    return { from: range.from, to: range.to, keys }
  }

  private record(
    ctx: ChangeContext | undefined,
    action: 'key.usage_history' | 'usage.top',
    keyId: string | null,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.options.recorder.read(ctx, { action, keyId, details })
  }
}
