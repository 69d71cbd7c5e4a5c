import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config/config.js'
import { DOCS_PATH, OPENAPI_PATH } from './doc-paths.js'
import { registerDocsConsole } from './docs-console.js'
import { keepReferencedSchemas } from './openapi-components.js'
import { errorResponses } from './openapi-docs.js'
import type { RouteSettings } from './route-settings.js'

/** What an API says of itself in its document: everything else is generated from its routes. */
export interface ApiDescription {
  title: string
  version: string
  /** Markdown: the document's introduction. */
  description: string
  tags: Array<{ name: string; description: string }>
  /** Bearer schemes by name; every operation needs one of them. */
  securitySchemes: Record<string, { type: 'http'; scheme: 'bearer'; description: string }>
  /** OpenAPI 3.1 `webhooks`: what the API sends, by name. */
  webhooks?: Record<string, object>
}

/**
 * The OpenAPI 3.1 document of the public API, generated from the route schemas (one schema per
 * shape), served at OPENAPI_PATH, and the interactive console at DOCS_PATH. Servers carry the /v1
 * prefix, as the spec's base addresses do, so paths read /pets. The first server is relative ("/v1":
 * the origin the document was loaded from), so the console's "Try it out" works on whatever address
 * it was opened at, with no cross-origin request.
 */
export async function registerOpenApi(app: FastifyInstance, config: Config, api: ApiDescription): Promise<void> {
  const servers = [{ url: '/v1', description: 'This server (the address this document was loaded from)' }]
  if (config.publicBaseUrl !== undefined)
    servers.push({ url: `${config.publicBaseUrl}/v1`, description: `This instance's public address (${config.env})` })
  // Production and staging only when configured: a made-up host in the Servers list fails "Try it out".
  for (const [base, description] of [
    [config.productionBaseUrl, 'Production'],
    [config.stagingBaseUrl, 'Staging'],
  ] as const) {
    const url = `${base}/v1`
    if (base !== undefined && !servers.some((known) => known.url === url)) servers.push({ url, description })
  }
  const schemes = Object.keys(api.securitySchemes)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: api.title, version: api.version, description: api.description },
      servers,
      tags: api.tags,
      components: { securitySchemes: api.securitySchemes },
      security: Object.keys(api.securitySchemes).map((name) => ({ [name]: [] })),
      ...(api.webhooks === undefined ? {} : { webhooks: api.webhooks }),
    },
    // Components are named by their $id (Pet, NewPet, PetStatus, Error), not def-0, def-1, ...
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // The admin API (/admin/v1) has its own document (admin/openapi.ts), never this one.
    transform: ({ schema, url, route }) => ({
      schema: (url.startsWith('/admin/') ? { ...schema, hide: true } : withScope(schema, route.config, schemes)) as never,
      url: url.replace(/^\/v1(?=\/)/, ''),
    }),
    transformObject: (document) => keepReferencedSchemas((document as { openapiObject: object }).openapiObject),
  })
  app.get(OPENAPI_PATH, { config: { public: true }, schema: { hide: true } }, async () => app.swagger())
  const apiOrigins = servers.flatMap((s) => (s.url.startsWith('/') ? [] : [new URL(s.url).origin]))
  await app.register(registerDocsConsole, { documentPath: OPENAPI_PATH, docsPath: DOCS_PATH, apiOrigins })
}

type OperationSchema = { description?: string; response?: Record<string, unknown> }

/**
 * An operation's scope (route config `scope`, shared/scopes.ts), said where a client reads it:
 * its security requirement lists the scope (OpenAPI 3.1 allows role names for a non-OAuth scheme),
 * its description says so, and its answers include the 403 of a key without it. Derived from the
 * route config the credential checks, so a new route is documented as it is enforced.
 */
function withScope(schema: unknown, config: unknown, schemes: readonly string[]): unknown {
  const scope = (config as RouteSettings | undefined)?.scope
  if (scope === undefined) return schema
  const operation = schema as OperationSchema
  const note = `Needs an API key with the scope \`${scope}\`: a key without it is refused 403 \`insufficient_scope\` before the body is read, and the request counts against its quota.`
  return {
    ...operation,
    security: schemes.map((name) => ({ [name]: [scope] })),
    description: operation.description === undefined ? note : `${operation.description}\n\n${note}`,
    response: { ...operation.response, ...errorResponses('insufficient_scope') },
  }
}
