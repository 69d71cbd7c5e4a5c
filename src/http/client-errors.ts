import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { ApiError, type ErrorCode } from './errors.js'

/**
 * Errors at the HTTP parser level (a malformed request line, oversized headers, a request that
 * took too long): Node reports them on the socket, before any request object exists, so Fastify's
 * reply and our error path cannot answer them. This is the one place that writes an HTTP answer
 * by hand; it still sends the Error shape with the closed list's code and status.
 */
const REASONS: Partial<Record<ErrorCode, [string, string]>> = {
  headers_too_large: ['Request Header Fields Too Large', 'Request headers are too large'],
  request_timeout: ['Request Timeout', 'The request was not received in time'],
  invalid_request: ['Bad Request', 'Malformed HTTP request'],
}

/**
 * The last response started on each socket, so a parser error can wait for it (see below). An
 * entry is not removed when its response ends: a finished or destroyed response is simply not
 * waited for, and the entry goes with its socket (no listener per request on this hot path).
 */
const lastResponse = new WeakMap<Socket, ServerResponse>()

/** Keeps `lastResponse` for `server`: call once, before it serves. */
export function trackResponses(server: Server): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    lastResponse.set(req.socket, res)
  })
}

export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // An answer to an earlier (pipelined) request on this connection is still being produced: a 400
  // written now would come before it (and lose, say, a 201), so answer once it is finished. Only
  // when that earlier request was complete: an error in the request being read itself (EOF before
  // its body) must be answered now.
  const pending = lastResponse.get(socket)
  if (pending !== undefined && !pending.writableFinished && !pending.destroyed && pending.req.complete) {
    pending.once('finish', () => clientErrorHandler(error, socket))
    pending.once('close', () => {
      if (!pending.writableFinished) socket.destroy()
    })
    return
  }
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'headers_too_large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'invalid_request'
  const [reason, message] = REASONS[code]!
  const apiError = new ApiError(code, message)
  const body = JSON.stringify(apiError.toBody())
  socket.end(
    `HTTP/1.1 ${apiError.status} ${reason}\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
