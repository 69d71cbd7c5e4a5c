import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { isAdminRead } from '../auth/admin-token-credential.js'
import { DEFAULT_ADMIN_PORT } from '../config/config.js'
import { keepReferencedSchemas } from '../http/openapi-components.js'
import { MAX_GRACE_SECONDS, MAX_METADATA_BYTES } from '../keys/administration.js'
import { ADMIN_TOKEN_PREFIX } from '../keys/api-key.js'
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from '../shared/errors.js'
import { ADMIN_QUOTA } from '../shared/plans.js'
import { ADMIN_PREFIX, errorResponses } from './common/routes.js'

export const ADMIN_DOC_PATH = `${ADMIN_PREFIX}/openapi.json`

/** The admin API's own words where the shared descriptions speak of API keys and animals. */
const ADMIN_ERROR_DESCRIPTIONS: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'The admin token is missing, malformed, unknown or revoked, or an API key was sent instead.',
  not_found: 'No key with that id, or no such route.',
}

const isAdminRoute = (url: string) => url.startsWith(ADMIN_PREFIX + '/')

type OperationSchema = { description?: string; summary?: string; response?: Record<string, unknown> }

/**
 * A change operation's role, said where a client reads it: the `admin` role in its description
 * and the 403 a `read` token gets among its answers. Derived from the guard's own rule
 * (isAdminRead), so a new change operation is documented as one without a word written.
 */
function withRole(schema: unknown, route: { method: string | string[]; config?: unknown }): unknown {
  const operation = schema as OperationSchema
  const method = Array.isArray(route.method) ? route.method[0]! : route.method
  if (isAdminRead(method, (route.config ?? {}) as { adminRead?: boolean })) return schema
  const note = 'Needs an admin token of the role `admin`: a `read` token is refused 403 `forbidden_role`, before the body is read.'
  return {
    ...operation,
    description: operation.description === undefined ? note : `${operation.description}\n\n${note}`,
    response: { ...operation.response, ...errorResponses(403) },
  }
}

/**
 * The admin API's own OpenAPI 3.1 document, at /admin/v1/openapi.json (an admin call like any
 * other: a token is needed), generated from the admin route schemas by a second @fastify/swagger
 * instance (decorator `adminSwagger`) that sees only the admin routes. Never part of the public
 * document or /docs. Register before the admin routes.
 */
export async function registerAdminOpenApi(app: FastifyInstance): Promise<void> {
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) =>
    [
      'invalid_request',
      'unauthorized',
      'forbidden_role',
      'not_found',
      'method_not_allowed',
      'conflict',
      'payload_too_large',
      'unsupported_media_type',
      'rate_limited',
      'key_banned',
      'internal_error',
      'service_unavailable',
    ].includes(c),
  )
  await app.register(swagger, {
    decorator: 'adminSwagger',
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Animal Store admin API',
        version: '1.0.0',
        description: [
          `Manage API keys over HTTP: create, list, get, update, rotate, revoke, usage, usage history, and the audit log. Every call needs \`Authorization: Bearer ${ADMIN_TOKEN_PREFIX}…\` (an admin token, created with \`animal-store admin-tokens create --name NAME\`; an API key is refused).`,
          '',
          `**Where.** On the admin listener only (ADMIN_PORT, default ${DEFAULT_ADMIN_PORT}, on ADMIN_HOST, default 127.0.0.1: reachable from this machine only), with /metrics; never on the main listener, which answers 404 for these paths in any spelling. ADMIN_PORT=off turns both off.`,
          '',
          "**Roles.** An admin token has a role, given by `animal-store admin-tokens create --name NAME --role read|admin` or `POST /admin-tokens` (CLI default `admin`; tokens made before roles are `admin`): `read` may call every read (GET: keys, usage, the audit log, orders, admin tokens) and is refused every change with 403 `forbidden_role`, before its body is read; `admin` may call everything. Each change operation says so. `GET /token` tells a caller its own token's name and role.",
          '',
          `**Rate limits.** ${ADMIN_QUOTA.perMinute} requests per minute and ${ADMIN_QUOTA.perDay.toLocaleString('en')} per UTC day per admin token, with the same headers and 429s as the public API; requests without a valid token are limited per client address.`,
          '',
          `**Rules.** Times are RFC 3339 strings (UTC). Bodies are strict: unknown fields are 400, nothing is coerced. metadata: a JSON object of at most ${MAX_METADATA_BYTES} bytes. Rotation grace: 0 to ${MAX_GRACE_SECONDS} s. Every change is written to the audit log with the admin token's id and the X-Request-Id; secrets never are.`,
          '',
          '**Errors.** `{"code","message","status"}`, codes:',
          '',
          '| code | status | meaning |',
          '|---|---|---|',
          ...codes.map((c) => `| \`${c}\` | ${ERROR_STATUS[c]} | ${ADMIN_ERROR_DESCRIPTIONS[c] ?? ERROR_DESCRIPTIONS[c]} |`),
        ].join('\n'),
      },
      servers: [{ url: ADMIN_PREFIX, description: 'This server (the address this document was loaded from)' }],
      tags: [
        { name: 'keys', description: 'API keys' },
        { name: 'usage', description: 'Usage history per key (counted per UTC minute and hour), and the top keys' },
        { name: 'audit', description: 'The audit log' },
        { name: 'orders', description: "Every caller's orders: list, view, cancel" },
        { name: 'token', description: 'The admin token of the call: who is calling, with which role' },
        { name: 'customers', description: 'Customers: their keys share one quota and their orders, and take their plan' },
        { name: 'admin tokens', description: 'Admin tokens: list, create (with a role), revoke' },
        {
          name: 'webhook endpoints',
          description: 'Webhook endpoints: the URLs that are sent events, signed with their secret (shown once), and how they are rotated',
        },
        { name: 'events', description: "The event log: every caller's events, with whose each one is" },
      ],
      components: {
        securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: `Admin token, ${ADMIN_TOKEN_PREFIX}…` } },
      },
      security: [{ adminToken: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => ({
      schema: (isAdminRoute(url) && url !== ADMIN_DOC_PATH ? withRole(schema, route) : { ...schema, hide: true }) as never,
      url: url.startsWith(ADMIN_PREFIX) ? url.slice(ADMIN_PREFIX.length) : url,
    }),
    transformObject: (document) => keepReferencedSchemas((document as { openapiObject: object }).openapiObject),
  })

  app.get(ADMIN_DOC_PATH, { config: { auth: 'admin' }, schema: { hide: true } }, async () =>
    (app as unknown as { adminSwagger(): unknown }).adminSwagger(),
  )
}
