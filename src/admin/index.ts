import type { FastifyInstance } from 'fastify'
import type { Step } from '../http/pipeline.js'
import type { KeyAdministration } from '../keys/administration.js'
import type { KeyResolver } from '../keys/key-resolver.js'
import type { RateLimiter } from '../limits/limiter.js'
import type { Metrics } from '../ops/metrics.js'
import type { UsageHistory } from '../usage/usage-history.js'
import { createAdminGuard } from './admin-guard.js'
import type { AdminTokenRepository } from './admin-token-repository.js'
import { AdminTokenResolver } from './admin-tokens.js'
import { registerConsole } from './console.js'
import { registerAdminOpenApi } from './openapi.js'
import { ADMIN_PREFIX, adminRoutes } from './routes.js'

export interface AdminApiOptions {
  admin: KeyAdministration
  /** Usage history: its two operations. */
  usage: UsageHistory
  adminTokens: AdminTokenRepository
  /**
   * Tells the admin token cache of revoked tokens (the change log they are written to with the
   * keys'), and holds the filter of known secrets, admin tokens included.
   */
  keyChanges: Pick<KeyResolver, 'follow' | 'known'>
  limiter: RateLimiter
  metrics: Metrics
}

/**
 * The admin API as one unit for app.ts: its guard step (for auth/guard.ts, routes with
 * `auth: 'admin'`) and `register`, which mounts its document and routes under /admin/v1, and the
 * operator console at /admin/console.
 */
export function adminApi({ admin, usage, adminTokens, keyChanges, limiter, metrics }: AdminApiOptions): {
  guard: Step
  register(app: FastifyInstance): Promise<void>
} {
  const tokens = new AdminTokenResolver(adminTokens, keyChanges.known)
  keyChanges.follow(tokens)
  return {
    guard: createAdminGuard({ tokens, limiter, metrics }),
    async register(app) {
      app.decorateRequest('adminToken', null)
      await registerAdminOpenApi(app)
      await app.register(adminRoutes, { prefix: ADMIN_PREFIX, admin, usage })
      await registerConsole(app)
    },
  }
}
