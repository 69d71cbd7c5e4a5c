import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Done } from './pipeline.js'
import { settingsOf } from './route-settings.js'

/**
 * Headers on every response: the request id, and what suits a JSON API (see SECURITY.md). An HTML
 * page (route config `page`) sets its own caching and content-security policy.
 */
export function commonHeaders(request: FastifyRequest, reply: FastifyReply, done: Done): void {
  reply.header('x-request-id', request.id)
  reply.header('x-content-type-options', 'nosniff')
  if (settingsOf(request).page !== true) {
    reply.header('cache-control', 'no-store')
    reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
  }
  done()
}

/** The path of a request URL, also for absolute-form request targets (`GET http://host/v1/pets`). */
export function requestPath(url: string): string {
  // Origin-form (nearly every request, and checked on every one): no split, no regex.
  if (url.charCodeAt(0) === 0x2f) {
    const query = url.indexOf('?')
    return query === -1 ? url : url.slice(0, query)
  }
  return (url.split('?')[0] ?? '').replace(ABSOLUTE_FORM_ORIGIN, '')
}
const ABSOLUTE_FORM_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i
