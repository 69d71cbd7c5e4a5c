import type { FastifyInstance } from 'fastify'
import { rateLimitRoutes } from './routes.js'
import { RateLimitStatusSchema } from './schemas.js'

/**
 * GET /v1/rate_limit as one unit for app.ts: its schema (a component of the public API's
 * document, which pets/index.ts registers first) and its route under /v1. The guard does the
 * work of not counting it (auth/uncounted-reads.ts, `config.quotaRead`).
 */
export async function registerRateLimitApi(app: FastifyInstance): Promise<void> {
  app.addSchema(RateLimitStatusSchema)
  await app.register(rateLimitRoutes, { prefix: '/v1' })
}
