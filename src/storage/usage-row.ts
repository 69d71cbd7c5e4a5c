import type { PlanName } from '../shared/plans.js'
import type { UsageCounts } from '../usage/counts.js'
import type { KeyTotals } from '../usage/repository.js'

/** The counter columns of usage_minutes and usage_hours, in COUNTERS order (usage/counts.ts). */
export const USAGE_COLUMNS = ['allowed', 'rate_limited', 'banned', 'status_2xx', 'status_4xx', 'status_5xx'] as const

export const USAGE_TABLE = { minute: 'usage_minutes', hour: 'usage_hours' } as const

/** The sums of the counter columns, named like the columns (both engines). */
export const SUM_COLUMNS = USAGE_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(', ')

export type UsageCountRow = Record<(typeof USAGE_COLUMNS)[number], number | string>

export function countsOfRow(row: UsageCountRow): UsageCounts {
  return {
    allowed: Number(row.allowed),
    rateLimited: Number(row.rate_limited),
    banned: Number(row.banned),
    status2xx: Number(row.status_2xx),
    status4xx: Number(row.status_4xx),
    status5xx: Number(row.status_5xx),
  }
}

export const rowValues = (c: UsageCounts) => [c.allowed, c.rateLimited, c.banned, c.status2xx, c.status4xx, c.status5xx]

export type TotalsRow = UsageCountRow & { key_id: string; name: string; plan: string }

export const toKeyTotals = (row: TotalsRow): KeyTotals => ({
  keyId: row.key_id,
  name: row.name,
  plan: row.plan as PlanName,
  counts: countsOfRow(row),
})

/** ORDER BY of the top list: the measure (a SQL expression over the sums) descending, then key id. */
export const TOP_MEASURE_SQL = {
  requests: 'SUM(u.allowed) + SUM(u.rate_limited) + SUM(u.banned)',
  rateLimited: 'SUM(u.rate_limited)',
} as const
