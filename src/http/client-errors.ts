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

/** The response being written on each socket, so a parser error can wait for it (see below). */
const inFlight = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>()

/** Keeps `inFlight` for `server`: call once, before it serves. */
export function trackResponses(server: Server): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    inFlight.set(socket, { req, res })
    res.once('close', () => {
      if (inFlight.get(socket)?.res === res) inFlight.delete(socket)
    })
  })
}

export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // An answer to an earlier (pipelined) request on this connection is still being produced: a 400
  // written now would come before it (and lose, say, a 201), so answer once it is finished. Only
  // when that earlier request was complete: an error in the request being read itself (EOF before
  // its body) must be answered now.
  const pending = inFlight.get(socket)
  if (pending !== undefined && !pending.res.writableFinished && pending.req.complete) {
    pending.res.once('finish', () => clientErrorHandler(error, socket))
    pending.res.once('close', () => {
      if (!pending.res.writableFinished) socket.destroy()
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
