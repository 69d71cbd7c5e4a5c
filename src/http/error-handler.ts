import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Socket } from 'node:net'
import { LimiterUnavailableError } from '../limits/limiter.js'
import { StorageUnavailableError } from '../storage/storage.js'
import { redactKeys, requestPath } from './common-headers.js'
import { ApiError, ERROR_STATUS, errorBody, type ErrorCode } from './errors.js'
import { describeValidationError } from './validation.js'

const BY_FASTIFY_CODE: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'Request body exceeds the 16 KiB limit'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid_request', 'Content-Length does not match the body'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_request', 'Request body is empty; expected a JSON object'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['invalid_request', 'Request body is not valid JSON'],
}

const BY_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  503: 'service_unavailable',
}

/** Maps anything thrown to the closed list of error codes; a 5xx never carries internals. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof StorageUnavailableError) {
    return new ApiError('service_unavailable', 'The database is unavailable; retry shortly', { 'retry-after': 1 })
  }
  if (error instanceof LimiterUnavailableError) {
    return new ApiError('service_unavailable', 'The rate-limit store is unavailable; retry shortly', { 'retry-after': 1 })
  }
  const e = error as FastifyError & { validation?: unknown[]; validationContext?: string }
  if (Array.isArray(e.validation) && e.validation.length > 0) {
    return new ApiError('invalid_request', describeValidationError(e.validation[0] as never, e.validationContext ?? 'body'))
  }
  const known = e.code ? BY_FASTIFY_CODE[e.code] : undefined
  if (known) return new ApiError(known[0], known[1])
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500
  const byStatus = BY_STATUS[status]
  if (byStatus && status < 500) return new ApiError(byStatus, e.message || byStatus)
  if (byStatus) return new ApiError(byStatus, 'The service is unavailable; retry shortly')
  return new ApiError('internal_error', 'Internal error; quote the X-Request-Id when reporting it')
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error)
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed')
    reply.code(apiError.status).headers(apiError.headers).send(apiError.toBody())
  })

  // Normally answered earlier by registerRouteFallback; kept so that nothing falls to Fastify's shape.
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody('not_found', `No route for ${request.method} ${redactKeys(requestPath(request.url).slice(0, 200))}`))
  })
}

/** Errors at the HTTP parser level (malformed request line, oversized headers) in the Error shape too. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A response to an earlier (pipelined) request on this connection is still being produced:
  // answering now would put the 400 before it (and lose a 201), so answer once it is finished.
  const pending = (socket as unknown as { _httpMessage?: import('node:http').ServerResponse | null })._httpMessage
  // Only when that earlier request was complete: an error in the request being read itself (say, EOF
  // before its body) must be answered now, as before.
  if (pending && !pending.writableFinished && (pending as unknown as { req?: { complete: boolean } }).req?.complete) {
    pending.once('finish', () => clientErrorHandler(error, socket))
    pending.once('close', () => { if (!pending.writableFinished) socket.destroy() })
    return
  }
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const [code, message]: [ErrorCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['headers_too_large', 'Request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['request_timeout', 'The request was not received in time']
        : ['invalid_request', 'Malformed HTTP request']
  const status = ERROR_STATUS[code]
  const body = JSON.stringify(errorBody(code, message))
  const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
