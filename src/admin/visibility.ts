import { isIP } from 'node:net'
import { requestPath } from '../http/common-headers.js'
import type { Step } from '../http/pipeline.js'
import { noRouteError } from '../http/route-fallback.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin API does not exist for this request (see hideAdminFromRemote). */
    adminHidden?: boolean
  }
}

const isAdminPath = (path: string) => path === '/admin' || path.startsWith('/admin/')

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (::ffff:127.0.0.1). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false
  const v4 = /^(::ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[2]
  if (v4 !== undefined) return isIP(v4) === 4 && v4.startsWith('127.')
  return address === '::1'
}

/**
 * With the admin API on the main listener (no ADMIN_PORT), it answers loopback clients only:
 * for anyone else every /admin path is a path that does not exist. Decided by the socket's peer
 * address, never X-Forwarded-For (a proxy on this machine would make every client local: put the
 * admin API on its own listener then). Two steps around the guard, so that such a request is
 * limited and answered exactly like one for an unknown path: `mark` (before the guard) strips its
 * route settings, `answer` (after it) answers 404, also for methods no admin route has (no 405).
 */
export const hideAdminFromRemote = {
  mark: ((request, _reply, done) => {
    if (isAdminPath(requestPath(request.url)) && !isLoopback(request.socket.remoteAddress)) {
      request.adminHidden = true
      request.routeSettings = {}
    }
    done()
  }) as Step,
  answer: ((request, _reply, done) => done(request.adminHidden === true ? noRouteError(request) : undefined)) as Step,
}
