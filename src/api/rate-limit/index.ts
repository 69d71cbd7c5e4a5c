import type { PublicApp } from '../common/routes.js'
import { getRateLimit, RateLimitStatusSchema } from './get.js'

/** The caller's own key and quota (/rate_limit): its schema, in the order of the document's components. */
export const RATE_LIMIT_SCHEMAS = [RateLimitStatusSchema]

/** Its operation. */
export function rateLimitRoutes(app: PublicApp): void {
  getRateLimit(app)
}
