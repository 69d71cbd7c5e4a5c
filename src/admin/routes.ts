import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { rateLimitHeaderDocs, errorResponses as sharedErrorResponses } from '../http/openapi-docs.js'
import { AUDIT_SCAN_LIMIT, AUDIT_TIME_RANGE_LIMIT, type ChangeContext, type KeyAdministration } from '../keys/administration.js'
import { ApiError } from '../shared/errors.js'
import type { UsageHistory } from '../usage/usage-history.js'
import {
  ADMIN_LIST_LIMIT,
  ADMIN_SCHEMAS,
  AdminKeySchema,
  AuditPageSchema,
  CreatedKeySchema,
  CreateKeyBody,
  KeyIdParams,
  KeyPageSchema,
  KeyUsageSchema,
  ListAuditQuery,
  ListKeysQuery,
  RevokedKeySchema,
  RotatedKeySchema,
  RotateKeyBody,
  ref,
  TOP_USAGE_LIMIT,
  TopUsageQuery,
  TopUsageSchema,
  UpdateKeyBody,
  UsageHistoryQuery,
  UsageHistorySchema,
} from './schemas.js'
import {
  assertStorableJson,
  auditJson,
  callService,
  createdKeyJson,
  keyJson,
  keyPageJson,
  parseTime,
  revokedKeyJson,
  rotatedKeyJson,
  topUsageJson,
  usageBucketJson,
  usageJson,
} from './views.js'

export const ADMIN_PREFIX = '/admin/v1'

export interface AdminRoutesOptions {
  admin: KeyAdministration
  usage: UsageHistory
}

/** What the usage history operations say of their numbers, once for both. */
const USAGE_LATENESS =
  'Each instance counts in memory and writes its counts every USAGE_FLUSH_MS (default 5 s): the counts of the instance answering include what it has not written yet; other instances’ counts appear after their next write (up to one USAGE_FLUSH_MS late). ' +
  'Minute buckets are kept USAGE_MINUTE_RETENTION_HOURS (default 48 h), hour buckets USAGE_HOUR_RETENTION_DAYS (default 90 days). ' +
  'Only requests that presented a valid key are counted (not unknown, revoked or expired keys).'

/** Who is changing what, for the audit log the service writes: the admin token and the request id. */
const changeContext = (request: FastifyRequest): ChangeContext => ({
  actor: { type: 'admin_token', id: request.adminToken!.id },
  requestId: request.id,
})

/**
 * Paging links are always relative (RFC 8288): PUBLIC_BASE_URL names the public listener, and the
 * admin API is on another one (ADMIN_PORT), reachable only from this machine by default.
 */
const link = (path: string, query: Record<string, string | number | undefined>) =>
  `<${path}?${Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&')}>; rel="next"`

/** The shared error responses, with the admin API's own words for 401 and 404. */
const ADMIN_STATUS_TEXT: Record<number, string> = {
  401: 'Missing, malformed, unknown or revoked admin token (an API key is never an admin token). Code: `unauthorized`.',
  404: 'No key with that id. Code: `not_found`.',
  409: 'The key cannot take this change: it is revoked, or it was rotated (change its successor), or (a rotation) it has expired. Code: `conflict`.',
}
function errorResponses(...statuses: number[]): Record<number, object> {
  const out = sharedErrorResponses(...statuses.map((status) => (status === 409 ? 'conflict' : status)))
  for (const [status, description] of Object.entries(ADMIN_STATUS_TEXT)) {
    if (out[Number(status)] !== undefined) out[Number(status)] = { ...out[Number(status)], description }
  }
  return out
}

const linkHeaderDoc = { Link: { type: 'string', description: 'rel="next": the next page, present only when there is one.' } }
const tags = ['keys']

/**
 * The admin API: keys and the audit log over HTTP, under /admin/v1. Thin: each handler
 * parses its input, calls the key service (keys/administration.ts) and writes the answer; every
 * rule lives in the service. Every route has `auth: 'admin'`: an admin token, the admin quota.
 */
export const adminRoutes: FastifyPluginAsyncTypebox<AdminRoutesOptions> = async (app, { admin, usage }) => {
  for (const schema of ADMIN_SCHEMAS) app.addSchema(schema)
  const config = { auth: 'admin' as const }
  const key = ref(AdminKeySchema)

  app.post(
    '/keys',
    {
      config,
      schema: {
        operationId: 'createKey',
        summary: 'Create an API key',
        description:
          'Creates a key on a plan. Enterprise keys need perMinute and perDay; other plans refuse them. ' +
          'The key itself is in the answer this once (only its SHA-256 is stored). Written to the audit log.',
        tags,
        body: ref(CreateKeyBody),
        response: {
          201: {
            description: 'Created; `key` is shown only this once.',
            ...ref(CreatedKeySchema),
            headers: { ...rateLimitHeaderDocs, Location: { type: 'string', description: 'Path of the new key, /admin/v1/keys/{keyId}.' } },
          },
          ...errorResponses(400, 401, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { expiresAt, metadata, ...rest } = request.body
      if (metadata !== undefined) assertStorableJson(metadata, 'metadata')
      const created = await callService(() =>
        admin.createKey({ ...rest, expiresAt: parseTime('expiresAt', expiresAt), metadata }, changeContext(request)),
      )
      return reply.code(201).header('location', `${ADMIN_PREFIX}/keys/${created.view.id}`).send(createdKeyJson(created))
    },
  )

  app.get(
    '/keys',
    {
      config,
      schema: {
        operationId: 'listKeys',
        summary: 'List API keys',
        description: 'Keys in ascending id order, optionally filtered; never the keys themselves. Paged with `after` (Link rel="next").',
        tags,
        querystring: ListKeysQuery,
        response: {
          200: { description: 'A page of keys.', ...ref(KeyPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, plan, state, name } = request.query
      const page = await callService(() => admin.listKeys({ limit, after, plan, state, name }, changeContext(request)))
      if (page.nextAfter !== null) {
        reply.header('link', link(`${ADMIN_PREFIX}/keys`, { limit, plan, state, name, after: page.nextAfter }))
      }
      return keyPageJson(page)
    },
  )

  app.get(
    '/keys/:keyId',
    {
      config,
      schema: {
        operationId: 'getKey',
        summary: 'Get an API key',
        tags,
        params: KeyIdParams,
        response: {
          200: { description: 'The key.', ...key, headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => keyJson(await callService(() => admin.getKey(request.params.keyId, changeContext(request)))),
  )

  app.patch(
    '/keys/:keyId',
    {
      config,
      schema: {
        operationId: 'updateKey',
        summary: 'Update an API key',
        description:
          'Changes name, plan, limits, metadata or expiry: only the fields sent; null clears expiresAt or metadata. ' +
          'All or nothing: a refused field changes nothing. Every instance applies it within 2 s. Written to the audit log. ' +
          'A revoked key, or one that was rotated (its successor takes the changes), is 409 `conflict`.',
        tags,
        params: KeyIdParams,
        body: ref(UpdateKeyBody),
        response: {
          200: { description: 'The key as updated.', ...key, headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { expiresAt, metadata, ...rest } = request.body
      if (Object.keys(request.body).length === 0) {
        throw new ApiError(
          'invalid_request',
          'body must name at least one field to change: name, plan, perMinute, perDay, metadata, expiresAt',
        )
      }
      if (metadata !== undefined) assertStorableJson(metadata, 'metadata')
      const patch = {
        ...rest,
        ...(expiresAt === undefined ? {} : { expiresAt: parseTime('expiresAt', expiresAt) }),
        ...(metadata === undefined ? {} : { metadata }),
      }
      return keyJson(await callService(() => admin.updateKey(request.params.keyId, patch, changeContext(request))))
    },
  )

  app.post(
    '/keys/:keyId/rotate',
    {
      config,
      schema: {
        operationId: 'rotateKey',
        summary: 'Rotate an API key',
        description:
          'Issues a new key with the same plan, limits, name, metadata and quota (one quota for both: rotation never doubles a limit). ' +
          'The old key keeps working for gracePeriodSeconds (0: revoked at once), then answers 401. Written to the audit log. ' +
          'A key that is revoked, was rotated already, or has expired is 409 `conflict`.',
        tags,
        params: KeyIdParams,
        body: ref(RotateKeyBody),
        response: {
          201: {
            description: 'Rotated; `key` (the new key) is shown only this once.',
            ...ref(RotatedKeySchema),
            headers: { ...rateLimitHeaderDocs, Location: { type: 'string', description: 'Path of the new key.' } },
          },
          ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const rotated = await callService(() =>
        admin.rotateKey(request.params.keyId, { graceSeconds: request.body.gracePeriodSeconds }, changeContext(request)),
      )
      return reply.code(201).header('location', `${ADMIN_PREFIX}/keys/${rotated.view.id}`).send(rotatedKeyJson(rotated))
    },
  )

  app.post(
    '/keys/:keyId/revoke',
    {
      config,
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke an API key',
        description:
          'Revokes the key and every other key of its rotation chain still in its grace period (listed in `alsoRevoked`): a rotation replaces a compromised or old secret, so none of the old ones keeps working. ' +
          "The chain's current key is revoked only when it is the key named. " +
          'Idempotent: revoking a revoked key answers 200 with alreadyRevoked true and the first revocation time (and still ends any grace period left in its chain). ' +
          'Every instance refuses the keys within 2 s. No body (none, or `{}`). Written to the audit log, one `key.revoke` entry per key revoked (a repeated revoke too, with `alreadyRevoked: true`).',
        tags,
        params: KeyIdParams,
        response: {
          200: { description: 'Revoked.', ...ref(RevokedKeySchema), headers: rateLimitHeaderDocs },
          // A body is refused (none, or {}), but read first: 413 and 415 come from the body parser.
          ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      // No body: none, or `{}` for clients that always send one; anything else would be ignored, so it is refused.
      const body = request.body as unknown
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)) {
        throw new ApiError('invalid_request', 'revoke takes no body: send none, or {}')
      }
      return revokedKeyJson(await callService(() => admin.revokeKey(request.params.keyId, changeContext(request))))
    },
  )

  app.get(
    '/keys/:keyId/usage',
    {
      config,
      schema: {
        operationId: 'getKeyUsage',
        summary: 'Usage of an API key',
        description:
          "The current minute and day counts of the key's quota, remaining, resets, ban state and last use: what the rate-limit headers show, without counting a request.",
        tags,
        params: KeyIdParams,
        response: {
          200: { description: 'Usage.', ...ref(KeyUsageSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => usageJson(await callService(() => admin.keyUsage(request.params.keyId, changeContext(request)))),
  )

  app.get(
    '/keys/:keyId/usage/history',
    {
      config,
      schema: {
        operationId: 'getKeyUsageHistory',
        summary: 'Usage history of an API key',
        description:
          'Per-minute or per-hour counts of the key (or, with scope=chain, of every key of its rotation chain summed): how the rate limiter decided (allowed, rateLimited, banned) and the class of the answer. ' +
          '**Zero-filled:** every bucket from `from` (inclusive) to `to` (exclusive) is in the answer, oldest first, zeros included, so a chart draws it as it is. ' +
          '`from` and `to` are truncated to the start of their bucket; defaults: `to` the start of the bucket after the current one, `from` 60 minutes (minute) or 24 hours (hour) before `to`. ' +
          '**Bounds:** at most 1440 minute buckets (24 h) or 2160 hour buckets (90 days) per call; a wider or reversed range is 400 `invalid_request` naming `from` (or `to`). ' +
          USAGE_LATENESS,
        tags: ['usage'],
        params: KeyIdParams,
        querystring: UsageHistoryQuery,
        response: {
          200: { description: 'The buckets.', ...ref(UsageHistorySchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { granularity = 'minute', scope = 'key', from, to } = request.query
      const buckets = await callService(() =>
        usage.history(
          request.params.keyId,
          { granularity, scope, from: parseTime('from', from) ?? undefined, to: parseTime('to', to) ?? undefined },
          changeContext(request),
        ),
      )
      return { data: buckets.map(usageBucketJson) }
    },
  )

  app.get(
    '/usage/top',
    {
      config,
      schema: {
        operationId: 'listTopUsage',
        summary: 'Keys that used the most, or were limited the most',
        description:
          'Per-key totals over hour buckets from `from` (inclusive) to `to` (exclusive), most first (then by keyId), at most `limit` keys; keys with none of the measure are left out. ' +
          '`from` and `to` are truncated to the hour; defaults: the last 24 hours (to the start of the next hour). At most 2160 hours (90 days); a wider or reversed range is 400 `invalid_request` naming `from` (or `to`). ' +
          USAGE_LATENESS,
        tags: ['usage'],
        querystring: TopUsageQuery,
        response: {
          200: { description: 'The top keys.', ...ref(TopUsageSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const { from, to, by = 'requests', limit = TOP_USAGE_LIMIT.default } = request.query
      const top = await callService(() =>
        usage.top({ from: parseTime('from', from) ?? undefined, to: parseTime('to', to) ?? undefined, by, limit }, changeContext(request)),
      )
      return { data: top.keys.map(topUsageJson) }
    },
  )

  app.get(
    '/audit-log',
    {
      config,
      schema: {
        operationId: 'listAuditLog',
        summary: 'List the audit log',
        description:
          'Every successful admin call (changes and reads) and every change made with the CLI (keys and admin tokens): who, what, when, which key; never a secret. Oldest first, or newest first with `order=desc`; filtered by key, action, kind (changes or reads), actor and time (`from` inclusive, `to` exclusive; `from` after `to` is 400 naming `from`), all filters combined with AND. Paged with `after`, a seq in the listing order (Link rel="next" keeps the filters and the order). ' +
          'A page walks one index, chosen by the filters (a key and a kind, else a key, an actor, an action, a kind, an actor type, else the seq); ' +
          `other filters are checked on the entries walked, and then a page examines at most ${AUDIT_SCAN_LIMIT.toLocaleString('en')} entries: ` +
          'a page can be short, even empty, with `nextAfter` where the walk stopped; follow `nextAfter` until it is null. ' +
          `\`from\`/\`to\` bound the walk to the seqs of the range's entries when it holds at most ${AUDIT_TIME_RANGE_LIMIT.toLocaleString('en')}. ` +
          'This listing is itself recorded, after it is read, with its filters.',
        tags: ['audit'],
        querystring: ListAuditQuery,
        response: {
          200: { description: 'A page of entries.', ...ref(AuditPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, order, after, keyId, action, kind, actorType, actor, from, to } = request.query
      const filters = { order, keyId, action, kind, actorType, actorId: actor }
      const bounds = { from: parseTime('from', from) ?? undefined, to: parseTime('to', to) ?? undefined }
      const page = await callService(() => admin.listAudit({ limit, after, ...filters, ...bounds }, changeContext(request)))
      if (page.nextAfter !== null)
        reply.header(
          'link',
          link(`${ADMIN_PREFIX}/audit-log`, { limit, order, keyId, action, kind, actorType, actor, from, to, after: page.nextAfter }),
        )
      return { data: page.entries.map(auditJson), nextAfter: page.nextAfter }
    },
  )
}
