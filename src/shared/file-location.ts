/**
 * Checks a path where the service is to create or open a file (the SQLite database, LOG_FILE)
 * before anything else touches it, so that a bad path is one clear cause instead of a hang or a
 * crash. Node 20's recursive mkdirSync spins forever on some paths (`/proc/nope/x.db`: mkdir
 * answers ENOENT for a parent that exists), so directories are created here one at a time.
 *
 * What the service writes (key hashes, customer metadata, the audit log, client addresses) is for
 * its own user only: files it creates are PRIVATE_FILE_MODE and directories PRIVATE_DIRECTORY_MODE,
 * whatever the umask lets through (most systems start processes with 022: world-readable).
 */
import { mkdirSync, type Stats, statfsSync, statSync } from 'node:fs'
import { dirname, join, parse, resolve } from 'node:path'

export const PRIVATE_FILE_MODE = 0o600
export const PRIVATE_DIRECTORY_MODE = 0o700

/** The path cannot hold the file; the message is the cause, for an operator. */
export class UnusableFileError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnusableFileError'
  }
}

/** statfs magic numbers of kernel filesystems that cannot hold ordinary files (linux/magic.h). */
const SPECIAL_FILESYSTEMS = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0xcafe4a11, 'bpf'],
])

const ERRNO_TEXT: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted (an immutable file or directory, or a protected filesystem)',
  EROFS: 'read-only filesystem',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a component of the path is not a directory',
  EISDIR: 'is a directory',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
}

export const errnoOf = (error: unknown): string | undefined => (error as { code?: unknown } | null)?.code as string | undefined

/** `permission denied (EACCES)`, or the error's own message for a code without a text here. */
export function errnoText(error: unknown): string {
  const code = errnoOf(error)
  return code !== undefined && code in ERRNO_TEXT ? `${ERRNO_TEXT[code]} (${code})` : error instanceof Error ? error.message : String(error)
}

function specialFilesystem(path: string): string | undefined {
  try {
    return SPECIAL_FILESYSTEMS.get(Number(statfsSync(path).type))
  } catch {
    return undefined
  }
}

export function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false })
  } catch (error) {
    throw new UnusableFileError(`cannot look at ${path}: ${errnoText(error)}`)
  }
}

/**
 * Makes sure the directory of `filename` exists (creating what is missing) and is an ordinary
 * place for a `what` (a database, a log file), and that `filename` is not a directory. Returns
 * the absolute path; throws UnusableFileError naming the first component at fault.
 */
export function prepareFileLocation(filename: string, what: string): string {
  const file = resolve(filename)
  const dir = dirname(file)
  const { root } = parse(dir)
  let current = root
  for (const part of dir.slice(root.length).split(/[\\/]/).filter(Boolean)) {
    const parent = current
    current = join(current, part)
    const stats = statOrUndefined(current)
    if (stats?.isDirectory()) continue
    if (stats !== undefined) {
      throw new UnusableFileError(
        `the path goes through ${current}, which is a ${stats.isFile() ? 'regular file' : 'special file'}, not a directory`,
      )
    }
    const special = specialFilesystem(parent)
    if (special !== undefined) {
      throw new UnusableFileError(
        `cannot create directory ${current}: ${parent} is on the ${special} kernel filesystem, not a place for files`,
      )
    }
    try {
      mkdirSync(current, { mode: PRIVATE_DIRECTORY_MODE })
    } catch (error) {
      throw new UnusableFileError(`cannot create directory ${current}: ${errnoText(error)}`)
    }
  }
  const special = specialFilesystem(dir)
  if (special !== undefined) throw new UnusableFileError(`${dir} is on the ${special} kernel filesystem, not a place for ${what}`)
  if (statOrUndefined(file)?.isDirectory()) throw new UnusableFileError(`${file} is a directory, not ${what}`)
  return file
}
