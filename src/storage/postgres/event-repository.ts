import type { EventPage, EventQuery, EventRepository } from '../../events/event.js'
import { eventPageSql } from '../event-query.js'
import { type EventRow, toEventRecord } from '../event-row.js'
import type { Db } from './connection.js'

/** The event log on PostgreSQL: written by writeChange only (in the changes' transactions); read and swept here. */
export class PostgresEventRepository implements EventRepository {
  constructor(private readonly db: Db) {}

  async list(query: EventQuery): Promise<EventPage> {
    const { sql, params } = eventPageSql(query, (n) => `$${n}`)
    const rows = (await this.db.query<EventRow>(sql, params)).map(toEventRecord)
    const events = rows.slice(0, query.limit)
    return { events, nextAfter: rows.length > query.limit ? events[events.length - 1]!.seq : null }
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
