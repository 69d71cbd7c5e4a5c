import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../shared/errors.js'
import { redactKeys } from '../shared/key-redaction.js'
import { requestPath } from './common-headers.js'
import type { Done, Step } from './pipeline.js'
import type { RouteTable } from './route-settings.js'

/** An HTTP/1.1 request without Host is a 400 in the Error shape (Node's own is an empty 400). */
export function requireHost(request: FastifyRequest, _reply: FastifyReply, done: Done): void {
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
    done(new ApiError('invalid_request', 'Host header is required'))
  else done()
}

/**
 * What no route serves: 405 with Allow when some route serves the path with another method
 * (whatever the method), 404 otherwise, also when a route for this method found nothing there
 * (reply.callNotFound). Both derived from the registered routes.
 */
export function unroutedError(routes: RouteTable, request: FastifyRequest): ApiError {
  const path = requestPath(request.url)
  const allowed = routes.allowedMethods(path)
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    const template = routes.templateOf(path)
    return new ApiError('method_not_allowed', `${request.method} is not allowed on ${template}; allowed: ${allowed.join(', ')}`, {
      allow: allowed.join(', '),
    })
  }
  return noRouteError(request)
}

/** The 404 of a path no route serves. Redacted before it is cut short: a cut key would no longer match. */
export const noRouteError = (request: FastifyRequest): ApiError =>
  new ApiError('not_found', `No route for ${request.method} ${redactKeys(requestPath(request.url)).slice(0, 200)}`)

/**
 * Answers unrouted requests in onRequest, after authentication and limiting but before any body
 * is read: routes registered for the other methods would parse (and 400/413/415) the body first.
 */
export function answerUnrouted(routes: RouteTable): Step {
  return (request, _reply, done) => {
    if (request.is404) done(unroutedError(routes, request))
    // A path that does not start with '/' names no resource (the asterisk-form `OPTIONS *`, RFC 9112
    // section 3.2.4, with or without a query); Fastify's router takes `*` for the root path. An
    // absolute-form target with an empty path is the root (RFC 9112 section 3.2.2).
    else if (isResourceless(requestPath(request.url))) done(noRouteError(request))
    // `/v1/pets/` matched `/v1/pets/:petId` with an empty id ("petId must be an int64"): a trailing
    // slash names no resource here, so it is a 404 with the path meant (issue 32).
    else if (emptyLastParam(request)) done(trailingSlashError(routes, request))
    else done()
  }
}

const isResourceless = (path: string) => path !== '' && path.charCodeAt(0) !== 0x2f

/** The route matched ends with a parameter and the request's path ends with '/': that parameter is empty. */
const emptyLastParam = (request: FastifyRequest) =>
  /\/:[^/]+$/.test(request.routeOptions.url ?? '') && requestPath(request.url).endsWith('/')

/** The 404 of a trailing slash, with the path without it when a route serves that. */
function trailingSlashError(routes: RouteTable, request: FastifyRequest): ApiError {
  const error = noRouteError(request)
  const meant = requestPath(request.url).replace(/\/+$/, '')
  if (routes.allowedMethods(meant).length === 0) return error
  return new ApiError('not_found', `${error.message}: no such path; did you mean ${meant}?`)
}
