import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { applyCommonHeaders, requestPath } from './common-headers.js'
import { toApiError } from './error-handler.js'
import { ApiError } from './errors.js'

type Guard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

/**
 * Fastify answers a malformed percent-encoding in the path, or a parameter over maxParamLength,
 * before any hook runs, in its own shape. Here they get the same treatment as any request (common
 * headers, authentication and limits, deprecation headers on getPet) and a 400 Error body.
 */
export function frameworkErrorHandler(
  guard: () => Guard,
  deprecation: Record<string, string>,
): NonNullable<FastifyServerOptions['frameworkErrors']> {
  return (error, request, reply) => {
    applyCommonHeaders(request, reply)
    const getPet = /^\/v1\/pets\/[^/]*$/.test(requestPath(request.url)) && (request.method === 'GET' || request.method === 'HEAD')
    if (getPet) reply.headers(deprecation)
    const problem =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new ApiError('invalid_request', 'path parameter petId is too long')
        : new ApiError('invalid_request', 'The request path is not valid percent-encoding')
    const out = reply as FastifyReply
    const send = (e: ApiError) => void out.code(e.status).headers(e.headers).send(e.toBody())
    guard()(request, reply).then(
      () => send(problem),
      (err: unknown) => send(toApiError(err)),
    )
  }
}
