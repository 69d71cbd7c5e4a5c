import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Socket } from 'node:net'
import { LimiterUnavailableError } from '../limits/limiter.js'
import { StorageUnavailableError } from '../storage/storage.js'
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

  app.setNotFoundHandler((request, reply) => {
    const path = (request.url.split('?')[0] ?? '').slice(0, 200).replace(/as_(live|test)_[0-9A-Za-z]{38}/g, (k) => k.slice(0, 12) + '…')
    reply.code(404).send(errorBody('not_found', `No route for ${request.method} ${path}`))
  })
}

/** Errors at the HTTP parser level (malformed request line, oversized headers) in the Error shape too. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
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
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
