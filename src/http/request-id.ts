import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Keeps a client's X-Request-Id when it is safe to log verbatim; otherwise makes a new one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID()
}
