import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import type { Scope } from '../shared/scopes.js'

/**
 * A route's deprecation, set in its route config (`config.deprecation`). Every answer of such a
 * route carries RFC 9745 `Deprecation` (the date it was deprecated, as `@<unix seconds>`),
 * RFC 8594 `Sunset`, and `Link` to the successor and to the route's documentation; from the
 * sunset on it answers 410 Gone. The OpenAPI document marks it deprecated and documents the headers.
 */
export interface Deprecation {
  /** When the operation was deprecated (ms since the epoch). */
  since: number
  /** When it is removed (ms since the epoch): 410 from then on. */
  sunset: number
  /** Path of the operation that replaces it, e.g. /v1/pets. */
  successor: string
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Health, metrics, docs: no credential and no rate limit. Every other route needs an API key, or
     * an admin token with `auth: 'admin'`. A public route that checks a credential of its own
     * (GitHub's signature on secret scanning reports) limits what it refuses itself (auth/address-refusals.ts).
     */
    public?: boolean
    /** An HTML page (the docs console): it gets its own CSP, not the API's. */
    page?: boolean
    /** Deprecated: every answer says so, and from the sunset on the route answers 410. */
    deprecation?: Deprecation
    /** 'admin': authenticated by an admin token (not an API key) and limited at the admin quota. */
    auth?: 'admin'
    /**
     * With `auth: 'admin'`: a POST (or other method with a body) that only reads, which an admin
     * token of the role `read` may call like any GET or HEAD (auth/admin-token-credential.ts).
     */
    adminRead?: boolean
    /** A read with a strong ETag whose 304 (If-None-Match) does not count against the key's quota (http/conditional-reads.ts). */
    conditional?: boolean
    /**
     * A read of the caller's own quota (GET /v1/rate_limit): for a valid key it does not count against
     * the key's quota, within a budget of its own, and is answered even while the key is limited (auth/uncounted-reads.ts).
     */
    quotaRead?: boolean
    /**
     * Takes no body: none, or `{}` (the route refuses anything else). An empty body is then none
     * whatever its Content-Type says, since many clients send `Content-Type: application/json` on
     * every POST (http/json-body.ts).
     */
    noBody?: boolean
    /**
     * The body is read as bytes only, up to the body limit, into `request.rawBody`, and not parsed:
     * the route checks the bytes (a signature is over the bytes sent) before it parses them with
     * parseJsonBody (http/json-body.ts), so a body it refuses costs no parse.
     */
    rawBody?: boolean
    /**
     * The scope an API key needs to call this route (shared/scopes.ts; 403 insufficient_scope
     * without it: auth/api-key-credential.ts). A keyed route without one is open to any valid key.
     */
    scope?: Scope
  }
  interface FastifyRequest {
    /** The body as received, on routes whose config asks for it (`rawBody`). */
    rawBody?: Buffer
    /** The settings of the route this request is for (see settingsOf). */
    routeSettings: RouteSettings | null
  }
}

/** A route's own settings (its `config`), plus where it is mounted. */
export interface RouteSettings {
  url?: string
  method?: string
  public?: boolean
  page?: boolean
  deprecation?: Deprecation
  auth?: 'admin'
  adminRead?: boolean
  conditional?: boolean
  quotaRead?: boolean
  noBody?: boolean
  rawBody?: boolean
  scope?: Scope
}

/**
 * The route settings of a request, read once per request: Fastify's `routeOptions` getter builds
 * a new object on every access. Requests that match no route have none of these settings.
 */
export function settingsOf(request: FastifyRequest): RouteSettings {
  request.routeSettings ??= request.routeOptions.config as RouteSettings
  return request.routeSettings
}

interface RouteEntry {
  segments: string[]
  /** Method -> the route registered for it (its config is read when needed: later onRoute hooks may still set it). */
  methods: Map<string, RouteOptions>
}

/**
 * Every registered route, collected by an onRoute hook, so that what the router cannot tell (the
 * methods allowed on a path for 405 Allow, or the route a malformed path was meant for) is
 * derived from the routes themselves and never written twice.
 */
export class RouteTable {
  private readonly entries: RouteEntry[] = []

  /** Collects the routes registered on `app` from now on. */
  collect(app: FastifyInstance): void {
    app.decorateRequest('routeSettings', null)
    app.addHook('onRoute', (route) => {
      // The preflight catch-all of CORS (OPTIONS *) serves no resource: it must not make every path exist.
      if (route.url === '*') return
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      for (const method of methods) this.add(method, route)
    })
  }

  private add(method: string, route: RouteOptions): void {
    let entry = this.entries.find((e) => e.segments.join('/') === route.url)
    if (entry === undefined) {
      entry = { segments: route.url.split('/'), methods: new Map() }
      this.entries.push(entry)
    }
    entry.methods.set(method, route)
  }

  /** The methods some route serves `path` with (sorted), or none when no route template fits it. */
  allowedMethods(path: string): string[] {
    const allowed = new Set<string>()
    for (const entry of this.matching(path)) for (const method of entry.methods.keys()) allowed.add(method)
    return [...allowed].sort()
  }

  /** How the documentation writes the route template `path` fits, e.g. /v1/pets/{petId}. */
  templateOf(path: string): string | undefined {
    return this.matching(path)[0]
      ?.segments.map((s) => (s.startsWith(':') ? `{${s.slice(1)}}` : s))
      .join('/')
  }

  /** The path parameters of the first template `path` fits, as [name, raw segment] pairs. */
  paramsOf(path: string): Array<[string, string]> {
    const segments = path.split('/')
    const template = this.matching(path)[0]?.segments ?? []
    return template.flatMap((t, i) => (t.startsWith(':') ? [[t.slice(1), segments[i] ?? ''] as [string, string]] : []))
  }

  /** The settings of the route `method path` fits by shape, even when the path itself does not decode. */
  settingsFor(method: string, path: string): RouteSettings | undefined {
    for (const entry of this.matching(path)) {
      const route = entry.methods.get(method)
      if (route !== undefined) return { ...(route.config as RouteSettings), url: route.url, method }
    }
    return undefined
  }

  /**
   * Templates that fit segment by segment: a `:param` fits any one segment, `*` the rest (as the
   * router does, `/docs/static/*` fits `/docs/static/` but not `/docs/static`).
   */
  private matching(path: string): RouteEntry[] {
    const segments = path.split('/')
    return this.entries.filter(({ segments: template }) => {
      for (let i = 0; i < template.length; i++) {
        const t = template[i]!
        if (i >= segments.length) return false
        if (t === '*') return true
        if (!t.startsWith(':') && t !== segments[i]) return false
      }
      return template.length === segments.length
    })
  }
}
