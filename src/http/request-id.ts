import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/
const KEY_LIKE = /as_(live|test|admin)_/

/**
 * Keeps a client's X-Request-Id when it is safe to log verbatim (short, plain characters, and not
 * an API key pasted by mistake: ids are logged and echoed); otherwise makes a new one.
 */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && SAFE_ID.test(given) && !KEY_LIKE.test(given) ? given : randomUUID()
}
