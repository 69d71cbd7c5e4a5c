import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from './errors.js'

/**
 * The OpenAPI 3.1 document is generated from the route schemas (one schema per shape). Servers
 * carry the /v1 prefix, as the spec's base addresses do, so paths read /pets.
 */
export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  const servers = [
    { url: `${config.productionBaseUrl}/v1`, description: 'Production' },
    { url: `${config.stagingBaseUrl}/v1`, description: 'Staging' },
  ]
  const here = `${config.publicBaseUrl}/v1`
  if (!servers.some((s) => s.url === here)) servers.unshift({ url: here, description: `This instance (${config.env})` })
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
          '**Rate limits.** Each key has a per-minute window (aligned to the clock minute) and a per-day window (the UTC calendar day), from its plan: Free 60/min and 1,000/day, Pro 300 and 10,000, Business 1,000 and 100,000, Enterprise custom. A request counts in both windows or in neither. Requests without a valid key are limited per client address at the Free rates. Every response carries X-RateLimit-Limit/-Remaining/-Reset for the tightest window, and the IETF draft RateLimit-Policy and RateLimit fields. Over a limit: 429 `rate_limited` with Retry-After. Sending on while limited (as many refused requests in one minute as the per-minute limit, at least 10) starts a temporary ban: 429 `key_banned`, 60 s, doubling with each further ban within 24 h, up to one hour.',
          '',
          '**Errors.** Every error is `{"code","message","status"}` with one of these codes:',
          '',
          '| code | status | meaning |',
          '|---|---|---|',
          errorTable,
          '',
          '**Additions to the spec** (where it is silent): `after` and the `Link: rel="next"` header for paging; 400 for invalid query or path parameters on every operation; unknown query parameters and body fields are rejected; 405 with Allow, 413, 415, 410 after the sunset.',
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
    transform: ({ schema, url }) => ({ schema: schema as never, url: url.replace(/^\/v1(?=\/)/, '') }),
  })

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true, docExpansion: 'list' },
    staticCSP: false,
  })
}
