import type { FastifyServerOptions } from 'fastify'
import { ApiError } from '../shared/errors.js'
import { requestPath } from './common-headers.js'
import { sendError } from './error-handler.js'
import { runSteps } from './pipeline.js'
import { unroutedError } from './route-fallback.js'
import type { RouteTable } from './route-settings.js'

/**
 * Fastify answers a malformed percent-encoding in the path, or a parameter over maxParamLength,
 * before any hook runs, in its own shape. Here such a request gets the settings of the route its
 * path was meant for and the same admission steps as any request (headers, authentication and
 * limits: the app's `admissionSteps` decorator, declared once its steps are built), then a 400 in the
 * Error shape. Routing comes first, as for any request: a method the path does not serve is its
 * 405 with Allow, whatever its parameters hold (the fuzzer found `GET /v1/store/orders/<101
 * digits>/cancel` answered 400 where `GET /v1/store/orders/1/cancel` is 405).
 */
export function frameworkErrorHandler(routes: RouteTable, maxParamLength: number): NonNullable<FastifyServerOptions['frameworkErrors']> {
  return (error, request, reply) => {
    const path = requestPath(request.url)
    const settings = routes.settingsFor(request.method, path)
    request.routeSettings = settings ?? {}
    const unrouted = settings === undefined ? unroutedError(routes, request) : undefined
    const tooLong = routes.paramsOf(path).find(([, value]) => value.length > maxParamLength)?.[0] ?? 'parameter'
    const problem =
      unrouted?.code === 'method_not_allowed'
        ? unrouted
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new ApiError('invalid_request', `path parameter ${tooLong} is too long (at most ${maxParamLength} characters)`)
          : new ApiError('invalid_request', 'The request path is not valid percent-encoding')
    runSteps(request.server.admissionSteps, request, reply, (err) => sendError(request, reply, err ?? problem))
  }
}
