import { closeSync, openSync } from 'node:fs'
import { type Logger, pino } from 'pino'
import type { Config } from './config.js'
import { errnoText, prepareFileLocation, UnusableFileError } from './file-location.js'
import { StartupError } from './startup-error.js'

/**
 * The process logger. Keys never reach a log line: requests are logged by our own access-log
 * line (method, url, status, key id), and the Authorization header is redacted should any
 * serializer ever include headers.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFile'>): Logger {
  // Asynchronous writes (sonic-boom), a write per line so that log followers see every line at
  // once; flushed on shutdown. (Buffering to 4 KiB was tried: it delayed lines on quiet servers.)
  // Lines go to it as bytes: in its text mode sonic-boom measures the UTF-8 length of all the
  // text queued behind a write in progress for every line it adds (an access line per request),
  // and encodes each write twice; as bytes it adds lengths and copies once.
  const destination = pino.destination({
    dest: config.logFile === undefined ? 1 : openableLogFile(config.logFile),
    sync: false,
    contentMode: 'buffer',
  })
  return pino(
    {
      level: config.logLevel,
      hooks: { streamWrite: lineAsBytes },
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key'], censor: '[redacted]' },
      base: { pid: process.pid },
    },
    destination,
  )
}

/** pino's hook types a line as text; a destination in sonic-boom's buffer mode takes bytes. */
const lineAsBytes = (line: string): string => Buffer.from(line) as unknown as string

/**
 * LOG_FILE checked (and its directory created) before pino opens it: pino would open it
 * asynchronously and crash the process with a stack on an unusable path.
 */
function openableLogFile(logFile: string): string {
  const unusable = (cause: string) => new StartupError({ LOG_FILE: logFile }, cause)
  let file: string
  try {
    file = prepareFileLocation(logFile, 'a log file')
  } catch (error) {
    throw error instanceof UnusableFileError ? unusable(error.message) : error
  }
  try {
    closeSync(openSync(file, 'a'))
  } catch (error) {
    throw unusable(`${file} cannot be opened for appending: ${errnoText(error)}`)
  }
  return file
}
