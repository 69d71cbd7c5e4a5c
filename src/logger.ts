import { pino, type Logger } from 'pino'
import type { Config } from './config.js'

/**
 * The process logger. Keys never reach a log line: requests are logged by our own access-log
 * line (method, url, status, key id), and the Authorization header is redacted should any
 * serializer ever include headers.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFile'>): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key'], censor: '[redacted]' },
      base: { pid: process.pid },
    },
    // Buffered: one write per 4 KiB of lines rather than a syscall per line (an access line per
    // request would otherwise cost a write each). Flushed on shutdown; a crash loses at most 4 KiB.
    pino.destination({ dest: config.logFile ?? 1, sync: false, mkdir: true, minLength: 4096 }),
  )
}
