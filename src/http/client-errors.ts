import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { bodyOf } from '../shared/error-body.js'
import { ApiError, type ErrorCode } from '../shared/errors.js'
import { parseAddress } from './client-address.js'

/**
 * Errors at the HTTP parser level (a malformed request line, oversized headers, a request that
 * took too long): Node reports them on the socket, not to Fastify, whose reply and our error path
 * therefore cannot answer them. This is the one place that writes such an answer by hand; it still
 * sends the Error shape with the closed list's code and status, and an access line.
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

/**
 * Keeps `lastResponse` for `server`, and answers a request cut off by the inactivity timeout
 * (server.timeout): call once, before it serves.
 */
export function trackResponses(server: Server): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    lastResponse.set(req.socket, res)
  })
  // Node destroys a socket idle for server.timeout (REQUEST_TIMEOUT_MS) unless someone listens. A
  // body that stopped arriving was cut off that way, unanswered, before the requestTimeout sweep
  // (up to a sweep interval later) could answer it: a request still being received when no byte has
  // moved for that long is past requestTimeout, so it gets the sweep's error (408) now. Any other
  // idle socket (keep-alive, a client that stopped reading) is destroyed as before.
  server.on('timeout', (socket: Socket) => {
    if (isReceiving(socket)) server.emit('clientError', requestTimeoutError(), socket)
    else socket.destroy()
  })
}

/** No request has been read whole on `socket` yet, or the last one's body is still arriving. */
function isReceiving(socket: Socket): boolean {
  const last = lastResponse.get(socket)
  return last === undefined || !last.req.complete
}

/** What Node's requestTimeout sweep reports (its error class is internal). */
function requestTimeoutError(): NodeJS.ErrnoException {
  return Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })
}

/** Whether the bytes Node's parser failed on start with a HEAD request line. */
function isHeadRequest(error: NodeJS.ErrnoException & { rawPacket?: unknown }): boolean {
  return Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD '
}

/** Fastify's clientErrorHandler: Fastify calls it with the app as `this`. */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // An answer to an earlier (pipelined) request on this connection is still being produced: a 400
  // written now would come before it (and lose, say, a 201), so answer once it is finished. Only
  // when that earlier request was complete: an error in the request being read itself (EOF before
  // its body) must be answered now.
  const pending = lastResponse.get(socket)
  if (pending !== undefined && !pending.writableFinished && !pending.destroyed && pending.req.complete) {
    pending.once('finish', () => clientErrorHandler.call(this, error, socket))
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
  const body = JSON.stringify(bodyOf(apiError))
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  }
  // The socket caches its peer's address once read, and has none to give once destroyed, which
  // closing it after this answer may do before the access line is written.
  // Written as clientAddress writes an address (no request, so no forwarded one to trust).
  const ip = parseAddress(socket.remoteAddress ?? '') ?? socket.remoteAddress
  if (pending !== undefined && !pending.req.complete && !pending.headersSent) {
    // The request being received (its headers were read, its body was not): answered on its own
    // response, so that Fastify ends it like any other, with its access line (key id included).
    pending.writeHead(apiError.status, reason, headers).end(body)
    return
  }
  let head = `HTTP/1.1 ${apiError.status} ${reason}\r\n`
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  // The answer to a HEAD has no body (RFC 9110 section 9.3.2), also one refused before it was
  // parsed (a request line and headers over 8 KiB): its client would read the body as more data
  // after the answer (the fuzzer: "Data after `Connection: close`"). The request line is at the
  // start of the bytes Node's parser failed on, when they hold it.
  socket.end(isHeadRequest(error) ? `${head}\r\n` : `${head}\r\n${body}`)
  // No request Fastify logs owns this answer (none was read, or its own answer was sent already):
  // a line of its own, with what is known.
  this.log.info({ status: apiError.status, ip }, 'request')
}
