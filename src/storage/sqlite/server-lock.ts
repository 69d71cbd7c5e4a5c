/**
 * One server process per SQLite file. Rate limits (the in-memory limiter and its state file) and
 * the pet caches live in the server process: a second server on the same file would hand out
 * every quota a second time, and overwrite the first one's limiter state when it stops. Several
 * processes share one file only as `serve --workers N` with REDIS_URL, whose primary holds the lock.
 *
 * The lock is `<database file>.lock`, held with SQLite's own file lock. Node has no flock/fcntl,
 * and a lock file that only exists (O_EXCL, pid files, mkdir) stays behind when the process is
 * killed with -9 and has to be guessed stale. SQLite locks with POSIX fcntl locks, which the
 * kernel releases when the process ends however it ends; a connection in EXCLUSIVE locking mode
 * that has written once keeps its lock until it is closed. The CLI never takes it, so it works
 * beside a running server (SQLite's WAL lets both use the database itself).
 */
import { readFileSync, realpathSync, statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { isPostgresUrl, sqliteFilename } from '../../config/config.js'
import { escapeControlCharacters } from '../../shared/control-characters.js'
import { UnusableFileError } from '../../shared/file-location.js'
import { prepareSqliteFile } from './sqlite-file.js'

export interface ServerLock {
  /** The lock file. */
  readonly file: string
  /** Releases the lock (the kernel does it too when the process ends). */
  close(): Promise<void>
}

/** Thrown when another process serves the file; the message names the file, the holder and what to do instead. */
export class DatabaseInUseError extends UnusableFileError {}

/**
 * Takes the lock of the SQLite database `databaseUrl` names (creating the file, empty and private, if
 * missing), or undefined for PostgreSQL and in-memory databases, which need none. The caller keeps
 * the returned object until it stops: a lock that is garbage-collected is released.
 */
export function lockSqliteDatabase(databaseUrl: string, cli: string): ServerLock | undefined {
  if (isPostgresUrl(databaseUrl)) return undefined
  const name = sqliteFilename(databaseUrl)
  if (name === ':memory:' || name === '') return undefined
  // The real path: two spellings of one file (a symlink, ./x.db and x.db) are one lock.
  const database = realpathSync(prepareSqliteFile(name))
  // Created empty and private first, as the database is (SQLite would make it 0644 under umask 022).
  const file = prepareSqliteFile(`${database}.lock`)
  let db: Database.Database | undefined
  try {
    // timeout 0: a held lock is an answer, not something to wait for.
    db = new Database(file, { timeout: 0 })
    db.pragma('locking_mode = EXCLUSIVE')
    // The rollback journal in memory: no `-journal` file beside the lock file.
    db.pragma('journal_mode = MEMORY')
    // The first write takes the EXCLUSIVE lock, which this locking mode then keeps.
    db.exec('BEGIN EXCLUSIVE; COMMIT')
  } catch (error) {
    if (db?.open) db.close()
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) {
      throw new DatabaseInUseError(
        `${database} is in use by another server (${describeHolder(file)}, holding ${file}): one server process serves a SQLite file. ` +
          `For several processes use ${cli} serve --workers N with REDIS_URL; the CLI works beside a running server`,
      )
    }
    throw new UnusableFileError(`cannot lock ${file}: ${(error as Error).message}`)
  }
  const held = db
  return {
    file,
    close: async () => {
      if (held.open) held.close()
    },
  }
}

/**
 * "pid 1234: node dist/server.js" from the kernel's table of locks (Linux's /proc/locks: the
 * process that holds a POSIX lock on the file's inode), or "another process" where there is none.
 */
function describeHolder(file: string): string {
  let pid: string | undefined
  try {
    const { ino, dev } = statSync(file, { bigint: true })
    // Linux's dev_t: the major number in bits 8-19, the minor one in bits 0-7 and 20-31.
    const major = (dev >> 8n) & 0xfffn
    const minor = (dev & 0xffn) | ((dev >> 12n) & 0xfff00n)
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      // "1: POSIX  ADVISORY  WRITE 6460 fe:00:2146568 1073741824 1073742335" (device and inode in the 6th field)
      const fields = line.trim().split(/\s+/)
      const [maj, min, inode] = (fields[5] ?? '').split(':')
      if (fields[1] === 'POSIX' && inode === String(ino) && BigInt(`0x${maj}`) === major && BigInt(`0x${min}`) === minor) {
        pid = fields[4]
        break
      }
    }
  } catch {
    // No /proc/locks (not Linux): the holder cannot be named.
  }
  if (pid === undefined) return 'another process'
  let command = ''
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
  } catch {
    // It ended a moment ago, or its cmdline is not ours to read.
  }
  // Printed on a terminal: no control characters, and not the length of a whole environment.
  const safe = escapeControlCharacters(command)
  return safe === '' ? `pid ${pid}` : `pid ${pid}: ${safe.length > 200 ? `${safe.slice(0, 200)}…` : safe}`
}
