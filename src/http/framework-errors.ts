import type { FastifyServerOptions } from 'fastify'
import { ApiError } from '../shared/errors.js'
import { requestPath } from './common-headers.js'
import { sendError } from './error-handler.js'
import { runSteps } from './pipeline.js'
import type { RouteTable } from './route-settings.js'

/**
 * Fastify answers a malformed percent-encoding in the path, or a parameter over maxParamLength,
 * before any hook runs, in its own shape. Here such a request gets the settings of the route its
 * path was meant for and the same admission steps as any request (headers, authentication and
 * limits: the app's `admission` decorator, declared once its steps are built), then a 400 in the
 * Error shape.
 */
export function frameworkErrorHandler(routes: RouteTable, maxParamLength: number): NonNullable<FastifyServerOptions['frameworkErrors']> {
  return (error, request, reply) => {
    const path = requestPath(request.url)
    request.routeSettings = routes.settingsFor(request.method, path) ?? {}
    const tooLong = routes.paramsOf(path).find(([, value]) => value.length > maxParamLength)?.[0] ?? 'parameter'
    const problem =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new ApiError('invalid_request', `path parameter ${tooLong} is too long (at most ${maxParamLength} characters)`)
        : new ApiError('invalid_request', 'The request path is not valid percent-encoding')
    runSteps(request.server.admission, request, reply, (err) => sendError(request, reply, err ?? problem))
  }
}
