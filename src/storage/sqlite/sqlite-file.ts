/**
 * The SQLite database file: its path checked before SQLite touches it, and SQLite's open failures
 * turned into a cause an operator can act on.
 */
import { accessSync, closeSync, constants, openSync, unlinkSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import {
  errnoOf,
  errnoText,
  PRIVATE_FILE_MODE,
  prepareFileLocation,
  statOrUndefined,
  UnusableFileError,
} from '../../shared/file-location.js'

/** The absolute path of a usable database file (created here, empty and private, if missing); UnusableFileError otherwise. */
export function prepareSqliteFile(filename: string): string {
  const file = prepareFileLocation(filename, 'a database file')
  // SQLite opens a file it cannot write read-only without a word, and fails only at the first
  // write: ask the kernel (it knows immutable files and read-only mounts, also for root).
  if (statOrUndefined(file) !== undefined) {
    try {
      accessSync(file, constants.R_OK | constants.W_OK)
    } catch (error) {
      throw new UnusableFileError(`${file} is read-only: ${errnoText(error)}`)
    }
  } else createPrivately(file)
  return file
}

/**
 * SQLite would create the file 0644 (less the umask), and creates its -wal and -shm files with the
 * database file's own mode: a database file made 0600 first keeps all three private. An empty
 * file is an empty database to SQLite.
 */
function createPrivately(file: string): void {
  try {
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE))
  } catch {
    // SQLite's own open then fails on the same cause, and describeSqliteOpenFailure says which.
  }
}

/** Tries `open(path, flags)` and says why it fails, or undefined when it works (a file it created is removed). */
function openProblem(path: string, flags: 'r+' | 'wx'): string | undefined {
  try {
    closeSync(openSync(path, flags))
    if (flags === 'wx') unlinkSync(path)
    return undefined
  } catch (error) {
    return errnoOf(error) === 'EEXIST' ? undefined : errnoText(error)
  }
}

/** Why SQLite could not open or write `file`: the file itself, or its directory (WAL needs `-wal` and `-shm` files next to it). */
function whyNotWritable(file: string): string | undefined {
  const exists = statOrUndefined(file) !== undefined
  const problem = openProblem(file, exists ? 'r+' : 'wx')
  if (problem !== undefined) return exists ? `the file cannot be opened for writing: ${problem}` : `the file cannot be created: ${problem}`
  // Not the real -wal name: another process may be about to open the database and use that file.
  const companion = openProblem(join(dirname(file), `.${basename(file)}-probe-${process.pid}`), 'wx')
  if (companion !== undefined)
    return `cannot create files in ${dirname(file)} (WAL mode keeps -wal and -shm files next to the database): ${companion}`
  return undefined
}

/** An operator's cause for an error SQLite raised while opening, configuring or migrating `file`. */
export function describeSqliteOpenFailure(error: unknown, file: string): UnusableFileError | undefined {
  const code = errnoOf(error)
  if (code === undefined || !code.startsWith('SQLITE_')) return undefined
  if (code === 'SQLITE_NOTADB') return new UnusableFileError(`${file} is not a SQLite database (SQLITE_NOTADB)`)
  if (code === 'SQLITE_CORRUPT') return new UnusableFileError(`${file} is a corrupt SQLite database (SQLITE_CORRUPT)`)
  if (code === 'SQLITE_BUSY') return new UnusableFileError(`${file} stayed locked by another process for 5 s (SQLITE_BUSY)`)
  if (code === 'SQLITE_FULL') return new UnusableFileError(`no space left for ${file} (SQLITE_FULL)`)
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM')) {
    const why = whyNotWritable(file)
    const what = code.startsWith('SQLITE_READONLY') ? 'is read-only' : 'cannot be opened'
    return new UnusableFileError(`${file} ${what}${why === undefined ? '' : `: ${why}`} (${code})`)
  }
  return new UnusableFileError(`${file}: ${(error as Error).message} (${code})`)
}
