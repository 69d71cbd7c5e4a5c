import { setTimeout as sleep } from 'node:timers/promises'
import type pg from 'pg'
import type { EventPage, EventQuery, EventRepository } from '../../events/event.js'
import { type EventPageDialect, eventPageSql } from '../event-query.js'
import { type EventRow, toEventRecord } from '../event-row.js'
import type { Db } from './connection.js'

/**
 * The events not yet settled are those a write transaction still open may come before. A
 * transaction writes events only while it holds a lock on this schema's `events` table, taken
 * before its xid is: at BEGIN (Db.transaction's `LOCK TABLE events`), or when the one statement
 * that inserts them is parsed (insertWithChange). So of the transactions open when the listing's
 * snapshot was taken (pg_snapshot_xip), one that the lock table then shows running without a lock
 * on `events` writes none, and only the others hold the log back: the oldest of them is the
 * horizon (the snapshot's xmax when there is none). One read of pg_locks, so that a transaction is
 * judged on one view of its locks; one that ended in between is counted, to be safe (its event may
 * have committed after the snapshot). Without this, every write transaction on the server, in any
 * schema or database (xids are the server's), held the listings back.
 */
const WRITERS_HORIZON = `(WITH held AS MATERIALIZED (SELECT pid, locktype, relation, transactionid FROM pg_locks WHERE granted)
  SELECT COALESCE(min(x), pg_snapshot_xmax(pg_current_snapshot())) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
   WHERE x::text::bigint % 4294967296 NOT IN (
     SELECT t.transactionid::text::bigint FROM held t
      WHERE t.locktype = 'transactionid' AND t.pid IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM held r WHERE r.pid = t.pid AND r.locktype = 'relation' AND r.relation = 'events'::regclass)))`

/**
 * WRITERS_HORIZON in two statements, for a reader that cannot wait and read again (a webhook walk):
 * the lock table first, then the snapshot. A transaction that ends in between is then not in the
 * snapshot, where in one statement (the snapshot first) it is counted, to be safe, and holds the
 * horizon below events that have all committed (seen under load: a walk that took none of them).
 * One that begins in between is counted, but its xid is newer than every event committed before
 * the lock table was read. The rest as WRITERS_HORIZON.
 */
export async function readWritersHorizon(client: pg.PoolClient): Promise<bigint> {
  const { rows: held } = await client.query<{ xids: string[] | null }>(
    `WITH held AS MATERIALIZED (SELECT pid, locktype, relation, transactionid FROM pg_locks WHERE granted)
     SELECT array_agg(t.transactionid::text) AS xids FROM held t
      WHERE t.locktype = 'transactionid' AND t.pid IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM held r WHERE r.pid = t.pid AND r.locktype = 'relation' AND r.relation = 'events'::regclass)`,
  )
  const { rows } = await client.query<{ horizon: string }>(
    `SELECT COALESCE(min(x), pg_snapshot_xmax(pg_current_snapshot())) AS horizon FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE NOT (x::text::bigint % 4294967296 = ANY ($1::bigint[]))`,
    [held[0]?.xids ?? []],
  )
  return BigInt(rows[0]!.horizon)
}

/**
 * The log's order on PostgreSQL (migration 024): by the writing transaction's id, then seq, read
 * only up to the oldest transaction still open that may write an event (WRITERS_HORIZON).
 * `settled` marks the events below it: a transaction that has not committed yet has an xid at or
 * above it, so it can only add events after them. The server-wide xmin is the cheap first test:
 * when every row is below it, the lock table is not read (an InitPlan runs when first needed).
 * The cursor is an event's seq, its position looked up by the primary key; a cursor that names no
 * event (swept by retention) stands for xid 0, the start of the log.
 */
const POSTGRES_EVENT_PAGE: EventPageDialect = {
  mark: (n) => `$${n}`,
  order: 'xid, seq',
  after: (p) => `(xid, seq) > (COALESCE((SELECT xid FROM events WHERE seq = ${p}), '0'::xid8), ${p})`,
  columns: `xid < pg_snapshot_xmin(pg_current_snapshot()) OR xid < ${WRITERS_HORIZON} AS settled`,
}

/** How long a listing waits for the write transactions older than the events it would show. */
export const SETTLE_WAIT_MS = 1000

/** The event log on PostgreSQL: written by writeChange only (in the changes' transactions); read and swept here. */
export class PostgresEventRepository implements EventRepository {
  constructor(
    private readonly db: Db,
    private readonly settleWaitMs = SETTLE_WAIT_MS,
  ) {}

  /**
   * A page ends before the first event that is not settled: one that committed while an older
   * transaction that may write an event is still open. Such a transaction takes milliseconds, so the listing asks again a few times, up to `settleWaitMs`,
   * before it answers with the settled part (a client that just made a change then sees its
   * event); the rest comes in the next page.
   */
  async list(query: EventQuery): Promise<EventPage> {
    const { sql, params } = eventPageSql(query, POSTGRES_EVENT_PAGE)
    for (let waited = 0, pause = 5; ; waited += pause, pause = Math.min(pause * 2, 100)) {
      const rows = await this.db.query<EventRow & { settled: boolean }>(sql, params)
      const unsettled = rows.findIndex((r) => !r.settled)
      if (unsettled === -1 || unsettled >= query.limit) {
        const events = rows.slice(0, query.limit).map(toEventRecord)
        return { events, nextAfter: rows.length > query.limit ? events[events.length - 1]!.seq : null }
      }
      if (waited >= this.settleWaitMs) {
        const events = rows.slice(0, unsettled).map(toEventRecord)
        // More have committed: the next page starts where this one ends (or where it began).
        const nextAfter = events.length > 0 ? events[events.length - 1]!.seq : (query.after ?? null)
        return { events, nextAfter }
      }
      await sleep(pause)
    }
  }

  /** SKIP LOCKED: instances sweeping at once each take other rows, none waits for another's batch. */
  async deleteBefore(before: number, limit: number): Promise<number> {
    const rows = await this.db.query<{ seq: string }>(
      `DELETE FROM events WHERE seq IN
         (SELECT seq FROM events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING seq`,
      [before, limit],
    )
    return rows.length
  }
}
