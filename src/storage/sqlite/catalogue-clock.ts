import type Database from 'better-sqlite3'

/**
 * What a process can learn of commits to pets without a query per request: SQLite has one writer
 * at a time, so ids are assigned in commit order, and `PRAGMA data_version` (about 0.4 µs) moves
 * when another connection (another worker process, the CLI) commits. This connection's own commits
 * are counted beside it by the repositories that make them (`committed`).
 *
 * `changes` moves at every change of an existing pet, by any connection: the counter the triggers
 * of migration 008 keep (`pet_changes`), read again only when some commit happened since.
 */
export class CatalogueClock {
  private readonly dataVersion
  private readonly petChanges
  /** Commits through this connection, which its own `PRAGMA data_version` does not count. */
  private localCommits = 0
  private readAt = -1
  private changeCount = 0

  constructor(db: Database.Database) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck()
    this.petChanges = db.prepare<[], number>('SELECT changes FROM pet_changes WHERE id = 1').pluck()
  }

  /** After a commit through this connection that wrote pets (an insert or a change). */
  committed(): void {
    this.localCommits++
  }

  /** A number that moves at every commit of any connection that may have written pets. */
  commits(): number {
    return this.dataVersion.get()! + this.localCommits
  }

  /** A number that moves at every change of an existing pet, by any connection. */
  changes(): number {
    // Commits first, then the counter: the counter read is at least as new as the commit seen,
    // and a change committed after it moves the commits, so the next call reads it.
    const commits = this.commits()
    if (commits !== this.readAt) {
      this.readAt = commits
      this.changeCount = this.petChanges.get()!
    }
    return this.changeCount
  }
}
