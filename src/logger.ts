import { pino, type Logger } from 'pino'
import type { Config } from './config.js'

/**
 * The process logger. Keys never reach a log line: requests are logged by our own access-log
 * line (method, url, status, key id), and the Authorization header is redacted should any
 * serializer ever include headers.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFile'>): Logger {
  // Asynchronous writes (sonic-boom), a write per line so that log followers see every line at
  // once; flushed on shutdown. (Buffering to 4 KiB was tried: it delayed lines on quiet servers.)
  const destination = pino.destination({ dest: config.logFile ?? 1, sync: false, mkdir: true })
  return pino(
    {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key'], censor: '[redacted]' },
      base: { pid: process.pid },
    },
    destination,
  )
}
