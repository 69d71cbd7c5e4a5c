import type { FastifyInstance } from 'fastify'
import { redactKeys, requestPath } from './common-headers.js'
import { ApiError } from './errors.js'

const KNOWN_PATHS: Array<[RegExp, string[], string]> = [
  [/^\/v1\/pets$/, ['GET', 'HEAD', 'POST'], '/v1/pets'],
  [/^\/v1\/pets\/[^/]*$/, ['GET', 'HEAD'], '/v1/pets/{petId}'],
]

/**
 * Answers what no route serves in onRequest, after authentication and limiting but before any
 * body is read: 405 with Allow for a known path with another method (whatever the method), 404
 * otherwise. Registered routes for the other methods would parse (and 400/413/415) the body first.
 * Also: an HTTP/1.1 request without Host is a 400 in the Error shape (Node's own is an empty 400).
 */
export function registerRouteFallback(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      done(new ApiError('invalid_request', 'Host header is required'))
      return
    }
    if (!request.is404) {
      done()
      return
    }
    const path = requestPath(request.url)
    const known = KNOWN_PATHS.find(([pattern]) => pattern.test(path))
    if (known) {
      const [, methods, documented] = known
      done(
        new ApiError('method_not_allowed', `${request.method} is not allowed on ${documented}; allowed: ${methods.join(', ')}`, {
          allow: methods.join(', '),
        }),
      )
      return
    }
    done(new ApiError('not_found', `No route for ${request.method} ${redactKeys(path.slice(0, 200))}`))
  })
}
