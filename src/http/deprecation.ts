import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import { type Deprecation, settingsOf } from './route-settings.js'

interface Announcement {
  headers: Record<string, string>
  goneMessage: string
}

const HEADER_DOCS = {
  Deprecation: { type: 'string', description: 'RFC 9745: @<unix seconds> of the deprecation.' },
  Sunset: { type: 'string', description: 'RFC 8594: the HTTP date of the removal.' },
  Link: { type: 'string', description: 'rel="successor-version" (the replacement) and rel="deprecation" (documentation).' },
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * Reads `config.deprecation` of every route registered after it: documents it in the route's
 * schema and prepares its headers. Returns the two request steps: `announce` (headers, before
 * authentication so that 401 and 429 carry them too) and `enforceSunset` (410, after it).
 * `linkBase` is '' for relative links (RFC 8288 allows them) or an absolute origin.
 */
export function registerDeprecation(app: FastifyInstance, clock: Clock, linkBase: string) {
  const announcements = new WeakMap<Deprecation, Announcement>()

  app.addHook('onRoute', (route) => {
    const deprecation = route.config?.deprecation
    // The HEAD twin of a GET route shares its config and schema: the GET route defined them.
    if (deprecation === undefined || announcements.has(deprecation)) return
    route.schema ??= {}
    const schema = route.schema as Record<string, unknown>
    const docs = `${linkBase}/docs#/${(schema.tags as string[] | undefined)?.[0] ?? 'default'}/${String(schema.operationId)}`
    const operation = `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`
    announcements.set(deprecation, {
      headers: {
        deprecation: `@${Math.floor(deprecation.since / 1000)}`,
        sunset: new Date(deprecation.sunset).toUTCString(),
        link: `<${linkBase}${deprecation.successor}>; rel="successor-version", <${docs}>; rel="deprecation"; type="text/html"`,
      },
      goneMessage: `${operation} was removed on ${day(deprecation.sunset)}; use ${deprecation.successor}`,
    })
    schema.deprecated = true
    schema.description =
      `Deprecated since ${day(deprecation.since)}; removal on ${day(deprecation.sunset)}, after which it answers 410 Gone. ` +
      `Use ${deprecation.successor} instead. Every answer carries Deprecation (RFC 9745), Sunset (RFC 8594) and Link headers. ` +
      String(schema.description ?? '')
    const responses = (schema.response ?? {}) as Record<string, { headers?: object }>
    for (const status of Object.keys(responses)) {
      responses[status] = { ...responses[status], headers: { ...responses[status]!.headers, ...HEADER_DOCS } }
    }
  })

  const announcementOf = (request: FastifyRequest) => {
    const deprecation = settingsOf(request).deprecation
    return deprecation === undefined ? undefined : announcements.get(deprecation)
  }

  const announce = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const announcement = announcementOf(request)
    if (announcement !== undefined) reply.headers(announcement.headers)
    done()
  }

  const enforceSunset = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const deprecation = settingsOf(request).deprecation
    if (deprecation !== undefined && clock.now() >= deprecation.sunset) {
      done(new ApiError('gone', announcementOf(request)!.goneMessage))
      return
    }
    done()
  }

  return { announce, enforceSunset }
}
