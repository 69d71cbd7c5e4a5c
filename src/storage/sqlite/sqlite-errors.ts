import { type StorageFault, StorageFaultError, StorageUnavailableError } from '../../shared/outages.js'

/**
 * SQLite's result codes (better-sqlite3's `SqliteError.code`, extended codes included) of a file
 * that cannot be written or read as it is: the disk (or the database's size limit) is full, the
 * file or disk fails, a page is corrupt, the file or its mount is read-only.
 */
export function sqliteFault(code: string): StorageFault | undefined {
  if (code === 'SQLITE_FULL') return 'disk_full'
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'io_error'
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'corrupt'
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_PERM') return 'read_only'
  return undefined
}

/**
 * An error of a running SQLite store as the rest of the service sees it: a fault (503, remembered
 * for readiness), the write lock held by another process past the busy timeout (503: the next
 * try may get it), or the error itself (a bug: 500).
 */
export function toSqliteStorageError(error: unknown): unknown {
  if (error instanceof StorageUnavailableError) return error
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error
  const fault = sqliteFault(code)
  if (fault !== undefined) return new StorageFaultError(fault, error)
  return code.startsWith('SQLITE_BUSY') ? new StorageUnavailableError(error) : error
}
