import type { PlanName } from '../shared/plans.js'
import type { Granularity, UsageCounts } from './counts.js'

/** One key's counts in one minute, as a flush writes them. */
export interface UsageCell {
  keyId: string
  /** Start of the UTC minute, Unix ms. */
  minute: number
  counts: UsageCounts
}

/** One bucket of a history: the sum over the keys asked for. */
export interface UsageBucket {
  /** Start of the bucket, Unix ms. */
  start: number
  counts: UsageCounts
}

export type TopMeasure = 'requests' | 'rateLimited'

/** One key's totals over a range of hour buckets, with what the top list shows of the key. */
export interface KeyTotals {
  keyId: string
  name: string
  plan: PlanName
  counts: UsageCounts
}

export interface TopQuery {
  /** Hour bucket starts, Unix ms: from inclusive, to exclusive. */
  from: number
  to: number
  by: TopMeasure
  limit: number
  /** Only these keys (the recorder's pending keys, whose totals are merged into the stored top). */
  keyIds?: readonly string[]
}

/**
 * Storage of usage history (implemented by each store; `Storage.usage`): per key, a row per UTC
 * minute and a row per UTC hour, both written by every flush as additive upserts, so any number of
 * instances add up exactly and the hour rows need no roll-up job.
 */
export interface UsageRepository {
  /**
   * Adds the cells to their minute rows and to their hour rows, all in one transaction: all or
   * nothing. The batch holds each (keyId, minute) at most once.
   */
  addUsage(cells: readonly UsageCell[]): Promise<void>
  /** The non-empty buckets of [from, to) summed over `keyIds`, oldest first (no zero-fill here). */
  history(keyIds: readonly string[], granularity: Granularity, from: number, to: number): Promise<UsageBucket[]>
  /** The ids of every key of a quota (a rotation chain), in any order. */
  quotaKeyIds(quotaId: string): Promise<string[]>
  /** The ids of every key of a customer, revoked ones included (their history is the customer's), in any order. */
  customerKeyIds(customerId: string): Promise<string[]>
  /**
   * Per-key totals over hour rows in [from, to), keys with at least one of the measure only, by the
   * measure descending then keyId ascending, at most `limit` (every key of `keyIds` when given).
   */
  top(query: TopQuery): Promise<KeyTotals[]>
  /** Deletes at most `limit` rows of `granularity` that start before `before`; the number deleted. */
  deleteBefore(granularity: Granularity, before: number, limit: number): Promise<number>
}
