import { type Granularity, HOUR_MS } from '../../usage/counts.js'
import type { KeyTotals, TopQuery, UsageBucket, UsageCell, UsageRepository } from '../../usage/repository.js'
import {
  countsOfRow,
  SUM_COLUMNS,
  TOP_MEASURE_SQL,
  type TotalsRow,
  toKeyTotals,
  USAGE_COLUMNS,
  USAGE_TABLE,
  type UsageCountRow,
} from '../usage-row.js'
import type { Db } from './connection.js'

const COLUMNS = USAGE_COLUMNS.join(', ')
const ADD = USAGE_COLUMNS.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ')
const BATCH = `unnest($1::text[], $2::bigint[], ${USAGE_COLUMNS.map((_, i) => `$${i + 3}::bigint[]`).join(', ')}) AS b(key_id, start, ${COLUMNS})`

/*
 * Both upserts take their row locks in (key_id, start) order, in minutes then hours: two instances
 * flushing the same keys at once wait for each other instead of deadlocking.
 */
const ADD_MINUTES = `INSERT INTO usage_minutes AS t (key_id, start, ${COLUMNS})
  SELECT key_id, start, ${COLUMNS} FROM ${BATCH} ORDER BY key_id COLLATE "C", start
  ON CONFLICT (key_id, start) DO UPDATE SET ${ADD}`
const ADD_HOURS = `INSERT INTO usage_hours AS t (key_id, start, ${COLUMNS})
  SELECT key_id, hour, ${USAGE_COLUMNS.map((c) => `SUM(${c})::bigint`).join(', ')}
    FROM (SELECT *, start - start % ${HOUR_MS} AS hour FROM ${BATCH}) AS h
   GROUP BY key_id, hour ORDER BY key_id COLLATE "C", hour
  ON CONFLICT (key_id, start) DO UPDATE SET ${ADD}`

const U_SUMS = USAGE_COLUMNS.map((c) => `SUM(u.${c})::bigint AS ${c}`).join(', ')

/** Usage history in PostgreSQL: one transaction of two statements per flush, whatever its size. */
export class PostgresUsageRepository implements UsageRepository {
  constructor(private readonly db: Db) {}

  async addUsage(cells: readonly UsageCell[]): Promise<void> {
    if (cells.length === 0) return
    const values = [
      cells.map((c) => c.keyId),
      cells.map((c) => c.minute),
      cells.map((c) => c.counts.allowed),
      cells.map((c) => c.counts.rateLimited),
      cells.map((c) => c.counts.banned),
      cells.map((c) => c.counts.status2xx),
      cells.map((c) => c.counts.status4xx),
      cells.map((c) => c.counts.status5xx),
    ]
    await this.db.transaction(async (client) => {
      await client.query(ADD_MINUTES, values)
      await client.query(ADD_HOURS, values)
    })
  }

  async history(keyIds: readonly string[], granularity: Granularity, from: number, to: number): Promise<UsageBucket[]> {
    if (keyIds.length === 0) return []
    const rows = await this.db.query<UsageCountRow & { start: number }>(
      `SELECT start, ${SUM_COLUMNS.replace(/SUM\((\w+)\)/g, 'SUM($1)::bigint')} FROM ${USAGE_TABLE[granularity]}
        WHERE key_id = ANY($1::text[]) AND start >= $2 AND start < $3
        GROUP BY start ORDER BY start`,
      [keyIds, from, to],
    )
    return rows.map((r) => ({ start: Number(r.start), counts: countsOfRow(r) }))
  }

  async quotaKeyIds(quotaId: string): Promise<string[]> {
    return (await this.db.query<{ id: string }>('SELECT id FROM api_keys WHERE quota_id = $1', [quotaId])).map((r) => r.id)
  }

  async customerKeyIds(customerId: string): Promise<string[]> {
    return (await this.db.query<{ id: string }>('SELECT id FROM api_keys WHERE customer_id = $1', [customerId])).map((r) => r.id)
  }

  async top({ from, to, by, limit, keyIds }: TopQuery): Promise<KeyTotals[]> {
    if (keyIds !== undefined) {
      if (keyIds.length === 0) return []
      // Every key asked for, with zeros when it has no rows: the caller adds its pending counts.
      const rows = await this.db.query<TotalsRow>(
        `SELECT k.id AS key_id, k.name, k.plan, ${USAGE_COLUMNS.map((c) => `COALESCE(SUM(u.${c}), 0)::bigint AS ${c}`).join(', ')}
           FROM api_keys k LEFT JOIN usage_hours u ON u.key_id = k.id AND u.start >= $1 AND u.start < $2
          WHERE k.id = ANY($3::text[])
          GROUP BY k.id, k.name, k.plan`,
        [from, to, keyIds],
      )
      return rows.map(toKeyTotals)
    }
    const rows = await this.db.query<TotalsRow>(
      `SELECT u.key_id, k.name, k.plan, ${U_SUMS}
         FROM usage_hours u JOIN api_keys k ON k.id = u.key_id
        WHERE u.start >= $1 AND u.start < $2
        GROUP BY u.key_id, k.name, k.plan
       HAVING ${TOP_MEASURE_SQL[by]} > 0
        ORDER BY ${TOP_MEASURE_SQL[by]} DESC, u.key_id COLLATE "C"
        LIMIT $3`,
      [from, to, limit],
    )
    return rows.map(toKeyTotals)
  }

  async deleteBefore(granularity: Granularity, before: number, limit: number): Promise<number> {
    const table = USAGE_TABLE[granularity]
    const rows = await this.db.query<{ n: number }>(
      `WITH gone AS (DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE start < $1 LIMIT $2)) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before, limit],
    )
    return rows[0]?.n ?? 0
  }
}
