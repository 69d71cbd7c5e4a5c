import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { rateLimitHeaderDocs, errorResponses as sharedErrorResponses } from '../http/openapi-docs.js'
import type { ChangeContext, KeyAdministration } from '../keys/administration.js'
import { ApiError } from '../shared/errors.js'
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
  UpdateKeyBody,
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
  usageJson,
} from './views.js'

export const ADMIN_PREFIX = '/admin/v1'

export interface AdminRoutesOptions {
  admin: KeyAdministration
}

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
 * The admin API (issue 10): keys and the audit log over HTTP, under /admin/v1. Thin: each handler
 * parses its input, calls the key service (keys/administration.ts) and writes the answer; every
 * rule lives in the service. Every route has `auth: 'admin'`: an admin token, the admin quota.
 */
export const adminRoutes: FastifyPluginAsyncTypebox<AdminRoutesOptions> = async (app, { admin }) => {
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
          'Idempotent: revoking a revoked key answers 200 with alreadyRevoked true and the first revocation time. ' +
          'Every instance refuses the key within 2 s. No body (none, or `{}`). Written to the audit log (a repeated revoke too, with `alreadyRevoked: true`).',
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
    '/audit-log',
    {
      config,
      schema: {
        operationId: 'listAuditLog',
        summary: 'List the audit log',
        description:
          'Every successful admin call (changes and reads) and every change made with the CLI (keys and admin tokens), oldest first: who, what, when, which key; never a secret. Paged with `after` (Link rel="next"). This listing is itself recorded, after it is read.',
        tags: ['audit'],
        querystring: ListAuditQuery,
        response: {
          200: { description: 'A page of entries.', ...ref(AuditPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, keyId } = request.query
      const page = await admin.listAudit({ limit, after, keyId }, changeContext(request))
      if (page.nextAfter !== null) reply.header('link', link(`${ADMIN_PREFIX}/audit-log`, { limit, keyId, after: page.nextAfter }))
      return { data: page.entries.map(auditJson), nextAfter: page.nextAfter }
    },
  )
}
