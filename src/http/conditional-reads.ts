import { createHmac } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { bodyOf } from '../shared/error-body.js'
import { toApiError } from './error-handler.js'
import { settingsOf } from './route-settings.js'

/**
 * Conditional reads (RFC 9110 section 13), as GitHub's REST API answers them: a route with
 * `config.conditional` sends a strong `ETag` with every 200, and a request whose `If-None-Match`
 * names it gets 304 Not Modified without a body. A 304 answered for a valid key that named the
 * tag does not count against the key's minute and day quota (the guard defers the count:
 * auth/uncounted-reads.ts); any other answer is counted, once, either by the route before it
 * sends its 200 (`sendConditional`) or, for an answer the route never reached (400, 404,
 * 500...), by `countDeferred` when it is sent. `If-None-Match: *` is counted at once by the
 * guard: it gets its 304 (RFC 9110), but shows no copy held, so it is a read like any other.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the guard let a conditional read through without counting it yet; null otherwise, or once settled. */
    deferredCount: DeferredCount | null
  }
}

/** The count of a conditional read, put off until its answer is known (set by auth/uncounted-reads.ts). */
export interface DeferredCount {
  /** Counts the request against its key's quota and sets the headers of that count; rejects with the 429 when refused. */
  count(): Promise<void>
  /** The answer is a 304: nothing is counted, in the limiter or in usage history. */
  waive(): void
}

/**
 * The strong entity tags of representations: HMAC-SHA256 (base64url) of exactly what the 200
 * sends, keyed with a key derived from the service's secret (Storage.serviceSecret: one per
 * database, so every instance on it, and every restart, makes the same tag of the same answer).
 * A plain hash of the body would let anyone who holds a tag (a 304 shows it) find the answer by
 * trying the likely ones (the inventory is three small numbers); without the key a tag says
 * nothing of the answer, only whether it changed.
 */
export class EntityTags {
  private readonly key: Buffer

  constructor(serviceSecret: string) {
    // A key of its own, so that no other use of the service's secret shares it.
    this.key = createHmac('sha256', serviceSecret).update('animal-store entity tags').digest()
  }

  /** The tag of an answer made of `parts` (the body, a list's Link header; an absent one adds nothing). */
  of(...parts: Array<string | undefined>): string {
    const hmac = createHmac('sha256', this.key)
    // Parts are told apart by a byte that JSON text and a Link header never hold.
    for (const part of parts) if (part !== undefined) hmac.update(part).update('\0')
    return `"${hmac.digest('base64url')}"`
  }
}

/** `If-None-Match: *`: any current representation. */
const isWildcard = (header: string): boolean => header.trim() === '*'

/**
 * Whether `If-None-Match` names `etag`: `*`, or a list of entity tags compared weakly (RFC 9110
 * section 13.1.2: `W/"x"` matches `"x"`). Split at commas, spaces around them allowed: the grammar
 * lets a tag hold a comma, but the service's own tags (base64url) never do, so no such tag could
 * match anyway.
 */
export function ifNoneMatchNames(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (isWildcard(header)) return true
  for (const item of header.split(',')) {
    const tag = item.trim()
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true
  }
  return false
}

/**
 * A GET (or its HEAD) of a route with `config.conditional` that sends `If-None-Match` naming
 * entity tags: its quota may be deferred. Not `*`, which any current answer matches: it shows no
 * copy held, and a free 304 to it would be a free read of whether the resource changed, ten
 * times the plan's rate (the conditional budget).
 */
export function isConditionalRead(request: FastifyRequest): boolean {
  const header = request.headers['if-none-match']
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    settingsOf(request).conditional === true &&
    header !== undefined &&
    !isWildcard(header)
  )
}

/** What Fastify sets for a serialized body: the routes send their bytes with the same type. */
const JSON_UTF8 = 'application/json; charset=utf-8'

/**
 * Sends a route's 200 (`body`, already serialized by the route's response schema) with its
 * `etag`, or 304 without a body when `If-None-Match` names it (or is `*`). A 304 to a deferred
 * read leaves the quota uncounted (its rate-limit headers show the windows as the guard found
 * them); a 200 counts it first, so a refusal is the usual 429.
 */
export async function sendConditional(request: FastifyRequest, reply: FastifyReply, body: string, etag: string): Promise<FastifyReply> {
  reply.header('etag', etag)
  if (ifNoneMatchNames(request.headers['if-none-match'], etag)) {
    request.deferredCount?.waive()
    return reply.code(304).send()
  }
  await request.deferredCount?.count()
  return reply.type(JSON_UTF8).send(body)
}

/**
 * onSend: counts a deferred conditional read whose answer is not the 304 (an error the route
 * threw, or one raised before it ran: a bad parameter, a 404). Should the quota refuse it, the
 * answer becomes that 429, as it would have been had the guard counted the request. A callback,
 * not an async hook: every other answer passes without a promise.
 */
export function countDeferred(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const deferred = request.deferredCount
  if (deferred === null) {
    done(null, payload)
    return
  }
  deferred.count().then(
    () => done(null, payload),
    (error: unknown) => {
      const refused = toApiError(error)
      reply.code(refused.status).headers(refused.headers).type(JSON_UTF8)
      // The Error schema's serializer writes the same bytes: its three fields in this order.
      done(null, JSON.stringify(bodyOf(refused)))
    },
  )
}
