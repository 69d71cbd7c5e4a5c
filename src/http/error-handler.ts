import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { BODY_LIMIT_TEXT } from '../shared/body-limit.js'
import { bodyOf } from '../shared/error-body.js'
import { ApiError, type ErrorCode } from '../shared/errors.js'
import { LimiterUnavailableError, StorageFaultError, StorageUnavailableError } from '../shared/outages.js'
import { Refusal, type RefusalKind } from '../shared/refusal.js'
import { describeValidationErrors } from './validation.js'

const BY_FASTIFY_CODE: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', `Request body exceeds the ${BODY_LIMIT_TEXT} limit`],
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

/** A service's refusal as the API answers it (the CLI's is `report` in cli.ts); the message is already in the API's words. */
const REFUSAL_CODES: Record<RefusalKind, ErrorCode> = {
  invalid: 'invalid_request',
  not_found: 'not_found',
  conflict: 'conflict',
  forbidden: 'forbidden_role',
  order_not_placed: 'order_not_placed',
}

/** Maps anything thrown to the closed list of error codes; a 5xx never carries internals. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof Refusal) return new ApiError(REFUSAL_CODES[error.kind], error.message)
  if (error instanceof StorageUnavailableError) {
    return new ApiError('service_unavailable', 'The database is unavailable; retry shortly', { 'retry-after': 1 })
  }
  if (error instanceof LimiterUnavailableError) {
    return new ApiError('service_unavailable', 'The rate-limit store is unavailable; retry shortly', { 'retry-after': 1 })
  }
  const e = error as FastifyError
  if (Array.isArray(e.validation) && e.validation.length > 0) {
    return new ApiError('invalid_request', describeValidationErrors(e.validation, e.validationContext ?? 'body'))
  }
  const known = e.code ? BY_FASTIFY_CODE[e.code] : undefined
  if (known) return new ApiError(known[0], known[1])
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500
  const byStatus = BY_STATUS[status]
  if (byStatus && status < 500) return new ApiError(byStatus, e.message || byStatus)
  if (byStatus) return new ApiError(byStatus, 'The service is unavailable; retry shortly')
  return new ApiError('internal_error', 'Internal error; quote the X-Request-Id when reporting it')
}

/**
 * The one function that answers an error, whatever raised it (a hook, a handler, the parser, the
 * router). Unexpected failures are logged with their stack; an unavailable dependency is not
 * logged per request (its client logs the outage once and the recovery once), but a storage fault
 * (a full disk, a corrupt page) is, as it was when it was a 500: nothing else reports it, and an
 * operator must act.
 */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
  const apiError = toApiError(error)
  if (apiError.code === 'internal_error') request.log.error({ err: error }, 'request failed')
  else if (error instanceof StorageFaultError) request.log.error({ err: error, fault: error.fault }, 'storage fault')
  reply.code(apiError.status).headers(apiError.headers).send(bodyOf(apiError))
}

/** Every error answer of the app goes through sendError; `notFound` names what no route serves. */
export function registerErrorHandling(app: FastifyInstance, notFound: (request: FastifyRequest) => ApiError): void {
  app.setErrorHandler((error: unknown, request, reply) => sendError(request, reply, error))
  // Normally answered in onRequest (route-fallback.ts), before any body is read; a safety net.
  app.setNotFoundHandler((request, reply) => sendError(request, reply, notFound(request)))
}
