import type Database from 'better-sqlite3'
import type { EventPage, EventQuery, EventRepository } from '../../events/event.js'
import { eventPageSql, SQLITE_EVENT_PAGE } from '../event-query.js'
import { type EventRow, toEventRecord } from '../event-row.js'

/** The event log on SQLite: written by writeChange only (in the changes' transactions); read and swept here. */
export class SqliteEventRepository implements EventRepository {
  private readonly deleteOld

  constructor(private readonly db: Database.Database) {
    this.deleteOld = db.prepare<[number, number]>(
      'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ?)',
    )
  }

  async list(query: EventQuery): Promise<EventPage> {
    const { sql, params } = eventPageSql(query, SQLITE_EVENT_PAGE)
    const rows = (this.db.prepare(sql).all(...params) as EventRow[]).map(toEventRecord)
    const events = rows.slice(0, query.limit)
    return { events, nextAfter: rows.length > query.limit ? events[events.length - 1]!.seq : null }
  }

  async deleteBefore(before: number, limit: number): Promise<number> {
    return this.deleteOld.run(before, limit).changes
  }
}
