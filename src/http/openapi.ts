import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from '../shared/errors.js'
import { PLAN_QUOTAS } from '../shared/plans.js'
import { registerDocsConsole } from './docs-console.js'
import { keepReferencedSchemas } from './openapi-components.js'

const DOC_PATH = '/v1/openapi.json'

const plans = () =>
  Object.entries(PLAN_QUOTAS)
    .map(
      ([plan, q]) =>
        `${plan[0]!.toUpperCase()}${plan.slice(1)} ${q.perMinute.toLocaleString('en')}/min and ${q.perDay.toLocaleString('en')}/day`,
    )
    .join(', ')

/**
 * The OpenAPI 3.1 document, generated from the route schemas (one schema per shape), served at
 * /v1/openapi.json, and the interactive console at /docs. Servers carry the /v1 prefix, as the
 * spec's base addresses do, so paths read /pets. The first server is relative ("/v1": the origin
 * the document was loaded from), so the console's "Try it out" works on whatever address it was
 * opened at, with no cross-origin request.
 */
export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  const servers = [{ url: '/v1', description: 'This server (the address this document was loaded from)' }]
  if (config.publicBaseUrl !== undefined)
    servers.push({ url: `${config.publicBaseUrl}/v1`, description: `This instance's public address (${config.env})` })
  for (const s of [
    { url: `${config.productionBaseUrl}/v1`, description: 'Production' },
    { url: `${config.stagingBaseUrl}/v1`, description: 'Staging' },
  ]) {
    if (!servers.some((known) => known.url === s.url)) servers.push(s)
  }
  const errorTable = (Object.keys(ERROR_STATUS) as ErrorCode[])
    .map((c) => `| \`${c}\` | ${ERROR_STATUS[c]} | ${ERROR_DESCRIPTIONS[c]} |`)
    .join('\n')

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Animal Store API',
        version: '1.0.0',
        description: [
          'A catalogue of animals. Every operation needs `Authorization: Bearer <API key>`.',
          '',
          "**Getting a key.** The operator of the server creates one with `node dist/cli.js keys create --plan free --name NAME` (in the service's directory); the first start of a server prints one.",
          '',
          `**Rate limits.** Each key has a per-minute window (aligned to the clock minute) and a per-day window (the UTC calendar day), from its plan: ${plans()}, Enterprise custom. A request counts in both windows or in neither. Requests without a valid key are limited per client address at the Free rates. Every response carries X-RateLimit-Limit/-Remaining/-Reset for the tightest window, and the IETF draft RateLimit-Policy and RateLimit fields. Over a limit: 429 \`rate_limited\` with Retry-After. Sending on while limited (as many refused requests in one minute as the per-minute limit, at least 10) starts a temporary ban: 429 \`key_banned\`, 60 s, doubling with each further ban within 24 h, up to one hour.`,
          '',
          '**Errors.** Every error is `{"code","message","status"}` with one of these codes:',
          '',
          '| code | status | meaning |',
          '|---|---|---|',
          errorTable,
          '',
          '**Additions to the spec** (where it is silent): `after` and the `Link: rel="next"` header for paging; 400 for invalid query or path parameters on every operation; unknown query parameters and body fields are rejected; 405 with Allow, 413, 415, 410 after the sunset; the `Idempotency-Key` header on createPet (IETF draft-ietf-httpapi-idempotency-key-header: replay with `Idempotent-Replayed: true`, 409 while in flight, 422 for another body).',
          '',
          '**Decided where the spec is silent.** Integers are written in plain decimal in a body, a query and a path alike (no fraction, exponent, sign other than `-`, leading zeros or `-0`: `1e3`, `1.0`, `005`, `-0` are 400). A name must not be only white space and is stored exactly as sent. A 400 names every problem of the request in its `message` ("3 problems: …"). Links the service builds (`Link`, `Location`) are relative references unless the operator sets a public base URL. Cross-origin browser calls (CORS) are off unless the operator lists origins; credentials are never allowed.',
        ].join('\n'),
      },
      servers,
      tags: [{ name: 'pets', description: 'The animal catalogue' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key, as_live_… or as_test_…' } },
      },
      security: [{ bearerAuth: [] }],
    },
    // Components are named by their $id (Pet, NewPet, PetStatus, Error), not def-0, def-1, ...
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // The admin API (/admin/v1) has its own document (admin/openapi.ts), never this one.
    transform: ({ schema, url }) => ({
      schema: (url.startsWith('/admin/') ? { ...schema, hide: true } : schema) as never,
      url: url.replace(/^\/v1(?=\/)/, ''),
    }),
    transformObject: (document) => keepReferencedSchemas((document as { openapiObject: object }).openapiObject),
  })

  app.get(DOC_PATH, { config: { public: true }, schema: { hide: true } }, async () => app.swagger())
  const apiOrigins = servers.flatMap((s) => (s.url.startsWith('/') ? [] : [new URL(s.url).origin]))
  await app.register(registerDocsConsole, { documentPath: DOC_PATH, apiOrigins })
}
