import assert from 'node:assert/strict'
import { ERROR_STATUS } from '../../src/shared/errors.js'

/** An answer as app.inject gives it (statusCode), or as a socket-level client parses it (status). */
export type AnyResponse =
  | { statusCode: number; headers: Record<string, unknown>; body: string }
  | { status: number; headers: Record<string, unknown>; body: unknown }

const textOf = (body: unknown): string =>
  Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : JSON.stringify(body)

function parsed(body: unknown): unknown {
  if (!Buffer.isBuffer(body) && typeof body !== 'string') return body // parsed already
  try {
    return JSON.parse(textOf(body))
  } catch {
    return assert.fail(`the body is not JSON: ${JSON.stringify(textOf(body).slice(0, 200))}`)
  }
}

/**
 * Asserts an error answer in the spec's shape: this HTTP status, `application/json`, exactly
 * {code, message, status} with this code and status, a code of the closed list (src/shared/errors.ts)
 * that belongs to this status, and a message matching `mentions` when given. Returns the body.
 */
export function assertError(
  res: AnyResponse,
  status: number,
  code: string,
  mentions?: string | RegExp,
): { code: string; message: string; status: number } {
  const actual = 'statusCode' in res ? res.statusCode : res.status
  assert.equal(actual, status, `status ${actual}, body ${textOf(res.body).slice(0, 500)}`)
  assert.match(String(res.headers['content-type'] ?? ''), /^application\/json/)
  const body = parsed(res.body) as Record<string, unknown> | null
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `not an Error body: ${JSON.stringify(body)}`)
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status'], `not an Error body: ${JSON.stringify(body)}`)
  assert.equal(body.code, code)
  assert.equal(body.status, status)
  assert.equal(ERROR_STATUS[code as keyof typeof ERROR_STATUS], status, `${code} is a ${status} of the closed list`)
  assert.equal(typeof body.message, 'string')
  if (mentions) assert.match(body.message as string, typeof mentions === 'string' ? new RegExp(mentions) : mentions)
  return body as { code: string; message: string; status: number }
}
