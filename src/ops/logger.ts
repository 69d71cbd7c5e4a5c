import { openSync } from 'node:fs'
import { type Logger, pino } from 'pino'
import type { Config } from '../config/config.js'
import { errnoText, PRIVATE_FILE_MODE, prepareFileLocation, UnusableFileError } from '../shared/file-location.js'
import { redactKeys } from '../shared/key-redaction.js'
import { StartupError } from '../shared/startup-error.js'

/**
 * Lines are written once this many bytes have gathered... Each write is handed to a libuv thread
 * and its completion back to the event loop; with 4 KiB batches that handoff showed as 2% of a
 * busy server's CPU profile (a write every ~15 access lines), with 32 KiB under 1%.
 */
const LOG_BATCH_BYTES = 32 * 1024
/** sonic-boom's largest single write (its default, 16 KiB, must exceed minLength). */
const LOG_MAX_WRITE_BYTES = 64 * 1024
/** ...or this often (ms), whichever comes first. */
const LOG_FLUSH_MS = 100

/**
 * The process logger. Keys never reach a log line: requests are logged by our own access-log
 * line (method, url, status, client address, key or admin token id), the Authorization header
 * is redacted should any serializer ever include headers, and anything shaped like a key or an
 * admin token in any other line is cut to its display prefix (shared/key-redaction.ts).
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFile'>): Logger {
  // Asynchronous writes (sonic-boom) of up to LOG_BATCH_BYTES of lines at a time, and at least
  // every LOG_FLUSH_MS: a busy server writes one batch rather than a syscall per access line,
  // and a quiet one still shows every line within LOG_FLUSH_MS (buffering alone, tried before,
  // held lines back until 4 KiB had gathered). Flushed on shutdown and on exit; a process killed
  // outright (SIGKILL, out of memory) loses at most the lines of the last LOG_FLUSH_MS.
  // Lines go to it as bytes: in its text mode sonic-boom measures the UTF-8 length of all the
  // text queued for every line it adds, and encodes each write twice; as bytes it adds lengths
  // and copies once.
  const destination = pino.destination({
    dest: config.logFile === undefined ? 1 : openedLogFile(config.logFile),
    sync: false,
    contentMode: 'buffer',
    minLength: LOG_BATCH_BYTES,
    maxWrite: LOG_MAX_WRITE_BYTES,
    periodicFlush: LOG_FLUSH_MS,
  })
  const base = { pid: process.pid }
  const logger = pino(
    {
      level: config.logLevel,
      // Every line pino writes, whatever it holds (an error's message, a warning): no secret in it.
      // (The access line is written without pino: its URL is redacted where it is made.)
      hooks: { streamWrite: (line) => lineAsBytes(redactKeys(line)) },
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key'], censor: '[redacted]' },
      base,
      // For people and tools alike: `"level":"info"` rather than 30, `"time":"2026-…Z"` rather
      // than epoch ms (pino-pretty reads both forms).
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  )
  // The line info() writes, for fields already in JSON: the level and time as formatted above,
  // pino's message key, and the base fields.
  const bindings = JSON.stringify(base).slice(1, -1)
  infoLines.set(logger, (fields, msg) => {
    if (logger.isLevelEnabled('info'))
      destination.write(lineAsBytes(`{"level":"info","time":"${isoTimeNow()}",${bindings},${fields},"msg":${msg}}\n`))
  })
  return logger
}

let isoMs = 0
let isoText = ''
/**
 * `new Date().toISOString()`, as pino's isoTime writes it, made once per millisecond: it costs
 * about ten times Date.now(), and a busy server writes many access lines in the same millisecond.
 */
function isoTimeNow(): string {
  const now = Date.now()
  if (now !== isoMs) {
    isoMs = now
    isoText = new Date(now).toISOString()
  }
  return isoText
}

/**
 * Writes one info line whose fields are already JSON (`"a":1,"b":"x"`, none of the redacted
 * names) and whose message is a JSON string, exactly as `logger.info(fields, message)` would
 * write it. The access line (one per request) uses it: pino's general serialization of the same
 * fields costs about twice as much.
 */
export type InfoLineWriter = (fields: string, message: string) => void

/** The InfoLineWriter of each logger made by createLogger (other loggers have none: use info()). */
export const infoLines = new WeakMap<object, InfoLineWriter>()

/** pino's hook types a line as text; a destination in sonic-boom's buffer mode takes bytes. */
const lineAsBytes = (line: string): string => Buffer.from(line) as unknown as string

/**
 * LOG_FILE opened here, at once (its directory created), and handed to pino as a descriptor. Given
 * a path, pino opens it asynchronously: an unusable path crashed the process with a stack, and a
 * start that failed before the open completed (an unusable DATABASE_URL, a port in use) flushed a
 * log still opening, which crashed sonic-boom (it then writes a batch it does not have). Created
 * private: it holds client addresses and key ids.
 */
function openedLogFile(logFile: string): number {
  const unusable = (cause: string) => new StartupError({ LOG_FILE: logFile }, cause)
  let file: string
  try {
    file = prepareFileLocation(logFile, 'a log file')
  } catch (error) {
    throw error instanceof UnusableFileError ? unusable(error.message) : error
  }
  try {
    return openSync(file, 'a', PRIVATE_FILE_MODE)
  } catch (error) {
    throw unusable(`${file} cannot be opened for appending: ${errnoText(error)}`)
  }
}
