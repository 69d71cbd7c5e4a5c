import { createHmac } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { settingsOf } from './route-settings.js'

/**
 * Conditional reads (RFC 9110 section 13), as GitHub's REST API answers them: a route with
 * `config.conditional` sends a strong `ETag` with every 200, and a request whose `If-None-Match`
 * names it gets 304 Not Modified without a body. Here only what HTTP says: the tags, the match,
 * the 304 or the 200. Whether the request counts against the key's quota is the guard's, settled
 * by the answer once it is sent (auth/uncounted-reads.ts): a 304 to a valid key that named the tag
 * is not counted, any other answer is. `If-None-Match: *` is counted at once by the guard: it gets
 * its 304 (RFC 9110), but shows no copy held, so it is a read like any other.
 */

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
 * `etag`, or 304 without a body when `If-None-Match` names it (or is `*`). Which of the two is
 * all it decides: how the answer counts is settled by the guard's hook when it is sent.
 */
export function sendConditional(request: FastifyRequest, reply: FastifyReply, body: string, etag: string): FastifyReply {
  reply.header('etag', etag)
  if (ifNoneMatchNames(request.headers['if-none-match'], etag)) return reply.code(304).send()
  return reply.type(JSON_UTF8).send(body)
}
