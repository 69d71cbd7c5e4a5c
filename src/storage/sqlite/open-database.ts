import Database from 'better-sqlite3'
import type { Durability } from '../../config/config.js'
import { migrate } from './migrate.js'
import { describeSqliteOpenFailure } from './sqlite-file.js'

const OPEN_DEADLINE_MS = 5000

/**
 * SQLite's own page cache, in KiB (better-sqlite3 builds SQLite with 16 MB). The file's pages stay
 * in the operating system's page cache anyway, which is not the process's memory: what SQLite does
 * not keep is a read() away, not a disk read. The hot pages of the request path (the B-trees'
 * inner pages and right edges, where inserts go) fit in far less; the 16 MB filled up under a
 * stream of creates and was most of the process's native memory.
 */
const PAGE_CACHE_KB = 4096

/**
 * Opens, configures and migrates the file. SQLITE_BUSY is retried until OPEN_DEADLINE_MS: SQLite
 * skips the busy handler where waiting could deadlock (two processes that open a new file at once
 * and both switch it to WAL or migrate it, e.g. two CLI commands, or the workers of `serve
 * --workers`), and answers BUSY at once; a second try a moment later finds the work done.
 */
export function openMigrated(filename: string, durability: Durability): Database.Database {
  const started = performance.now()
  for (;;) {
    let db: Database.Database | undefined
    try {
      db = new Database(filename, { timeout: OPEN_DEADLINE_MS })
      // The first statements read the header and write: a file that is not a database, or that
      // cannot be written, fails here rather than on the first request.
      db.pragma('journal_mode = WAL')
      // NORMAL in WAL mode: a commit is in the WAL file before it returns, so it survives a crash of
      // the process; FULL adds an fsync per commit, so it also survives a power loss.
      db.pragma(`synchronous = ${durability === 'power' ? 'FULL' : 'NORMAL'}`)
      db.pragma(`cache_size = -${PAGE_CACHE_KB}`)
      migrate(db)
      return db
    } catch (error) {
      if (db?.open) db.close()
      const busy = (error as { code?: string }).code?.startsWith('SQLITE_BUSY') === true
      if (busy && performance.now() - started < OPEN_DEADLINE_MS) {
        // A synchronous pause (the constructor is synchronous, and this runs only at start).
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 30)
        continue
      }
      throw describeSqliteOpenFailure(error, filename) ?? error
    }
  }
}
