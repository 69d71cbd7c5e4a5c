import type Database from 'better-sqlite3'
import { bucketStart, type Granularity, HOUR_MS } from '../../usage/counts.js'
import type { KeyTotals, TopQuery, UsageBucket, UsageCell, UsageRepository } from '../../usage/repository.js'
import {
  countsOfRow,
  rowValues,
  SUM_COLUMNS,
  TOP_MEASURE_SQL,
  type TotalsRow,
  toKeyTotals,
  USAGE_COLUMNS,
  USAGE_TABLE,
  type UsageCountRow,
} from '../usage-row.js'

const upsert = (table: string) =>
  `INSERT INTO ${table} (key_id, start, ${USAGE_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
   ON CONFLICT (key_id, start) DO UPDATE SET ${USAGE_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`

const U_SUMS = USAGE_COLUMNS.map((c) => `SUM(u.${c}) AS ${c}`).join(', ')

/**
 * A list of key ids as one parameter, a JSON array: a statement takes at most 32,766 parameters,
 * and the top list asks for every key with pending counts (up to MAX_PENDING_CELLS of them).
 */
const KEY_ID_LIST = '(SELECT value FROM json_each(?))'

/** Usage history in SQLite: one IMMEDIATE transaction per flush. */
export class SqliteUsageRepository implements UsageRepository {
  private readonly addBatch

  constructor(private readonly db: Database.Database) {
    const minute = db.prepare(upsert(USAGE_TABLE.minute))
    const hour = db.prepare(upsert(USAGE_TABLE.hour))
    this.addBatch = db.transaction((cells: readonly UsageCell[]) => {
      for (const c of cells) {
        const values = rowValues(c.counts)
        minute.run(c.keyId, c.minute, ...values)
        hour.run(c.keyId, bucketStart(c.minute, HOUR_MS), ...values)
      }
    })
  }

  async addUsage(cells: readonly UsageCell[]): Promise<void> {
    if (cells.length > 0) this.addBatch.immediate(cells)
  }

  async history(keyIds: readonly string[], granularity: Granularity, from: number, to: number): Promise<UsageBucket[]> {
    if (keyIds.length === 0) return []
    const rows = this.db
      .prepare<unknown[], UsageCountRow & { start: number }>(
        `SELECT start, ${SUM_COLUMNS} FROM ${USAGE_TABLE[granularity]}
          WHERE key_id IN ${KEY_ID_LIST} AND start >= ? AND start < ?
          GROUP BY start ORDER BY start`,
      )
      .all(JSON.stringify(keyIds), from, to)
    return rows.map((r) => ({ start: r.start, counts: countsOfRow(r) }))
  }

  async quotaKeyIds(quotaId: string): Promise<string[]> {
    return this.db
      .prepare<[string], { id: string }>('SELECT id FROM api_keys WHERE quota_id = ?')
      .all(quotaId)
      .map((r) => r.id)
  }

  async customerKeyIds(customerId: string): Promise<string[]> {
    return this.db
      .prepare<[string], { id: string }>('SELECT id FROM api_keys WHERE customer_id = ?')
      .all(customerId)
      .map((r) => r.id)
  }

  async top({ from, to, by, limit, keyIds }: TopQuery): Promise<KeyTotals[]> {
    if (keyIds !== undefined) {
      if (keyIds.length === 0) return []
      // Every key asked for, with zeros when it has no rows: the caller adds its pending counts.
      return this.db
        .prepare<unknown[], TotalsRow>(
          `SELECT k.id AS key_id, k.name, k.plan, ${USAGE_COLUMNS.map((c) => `COALESCE(SUM(u.${c}), 0) AS ${c}`).join(', ')}
             FROM api_keys k LEFT JOIN usage_hours u ON u.key_id = k.id AND u.start >= ? AND u.start < ?
            WHERE k.id IN ${KEY_ID_LIST}
            GROUP BY k.id, k.name, k.plan`,
        )
        .all(from, to, JSON.stringify(keyIds))
        .map(toKeyTotals)
    }
    return this.db
      .prepare<unknown[], TotalsRow>(
        `SELECT u.key_id, k.name, k.plan, ${U_SUMS}
           FROM usage_hours u JOIN api_keys k ON k.id = u.key_id
          WHERE u.start >= ? AND u.start < ?
          GROUP BY u.key_id, k.name, k.plan
         HAVING ${TOP_MEASURE_SQL[by]} > 0
          ORDER BY ${TOP_MEASURE_SQL[by]} DESC, u.key_id
          LIMIT ?`,
      )
      .all(from, to, limit)
      .map(toKeyTotals)
  }

  async deleteBefore(granularity: Granularity, before: number, limit: number): Promise<number> {
    const table = USAGE_TABLE[granularity]
    return this.db.prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE start < ? LIMIT ?)`).run(before, limit)
      .changes
  }
}
