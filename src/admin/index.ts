import type { FastifyInstance } from 'fastify'
import type { AdminTokenService } from '../admin-tokens/admin-token-service.js'
import type { AdminTokenResolver } from '../admin-tokens/admin-tokens.js'
import { adminTokenCredential } from '../auth/admin-token-credential.js'
import type { AuditLogService } from '../changes/audit-log-service.js'
import type { EventLogService } from '../changes/event-log-service.js'
import type { CustomerService } from '../customers/customer-service.js'
import type { KeyAdministration } from '../keys/administration.js'
import type { OperatorOrders } from '../orders/operator-orders.js'
import type { UsageHistory } from '../usage/usage-history.js'
import type { WebhookDeliveryService } from '../webhooks/delivery-service.js'
import type { WebhookEndpointService } from '../webhooks/endpoint-service.js'
import { ADMIN_TOKEN_SCHEMAS, type AdminTokenRoutesOptions, adminTokenRoutes } from './admin-tokens/index.js'
import { type AdminAuditOptions, AUDIT_SCHEMAS, auditRoutes } from './audit/index.js'
import { ADMIN_PREFIX, type AdminApp } from './common/routes.js'
import { registerConsole } from './console.js'
import { type AdminCustomersOptions, CUSTOMER_SCHEMAS, customerRoutes } from './customers/index.js'
import { type AdminEventsOptions, EVENT_SCHEMAS, eventRoutes } from './events/index.js'
import { KEY_SCHEMAS, keyRoutes } from './keys/index.js'
import { registerAdminOpenApi } from './openapi.js'
import { type AdminOrdersOptions, ORDER_SCHEMAS, orderRoutes } from './orders/index.js'
import { TOKEN_SCHEMAS, tokenRoutes } from './token/index.js'
import { USAGE_SCHEMAS, usageRoutes } from './usage/index.js'
import { type AdminWebhookEndpointsOptions, WEBHOOK_ENDPOINT_SCHEMAS, webhookEndpointRoutes } from './webhook-endpoints/index.js'

export interface AdminApiOptions {
  admin: KeyAdministration
  /** Usage history: its two operations. */
  usage: UsageHistory
  /** Admin tokens: the service (changes), and the domain's one token cache (the credential), which follows the key-change poll. */
  adminTokens: AdminTokenService
  tokens: AdminTokenResolver
  /** Every caller's orders (the orders resource), each call on the audit log. */
  orders: OperatorOrders
  /** The audit log's reader (the audit log resource). */
  auditLog: AuditLogService
  /** Customers (the customers resource). */
  customers: CustomerService
  /** Webhook endpoints (the webhook endpoints resource). */
  webhookEndpoints: WebhookEndpointService
  /** Their delivery log (the same resource: /webhook-endpoints/{id}/deliveries, retry, replay). */
  webhookDeliveries: WebhookDeliveryService
  /** The event log's reader (the events resource). */
  eventLog: EventLogService
  now: () => number
}

/**
 * The admin API, by resource (keys/, usage/, audit/, orders/, token/, customers/, admin-tokens/,
 * webhook-endpoints/, events/; what they share in common/), under /admin/v1. Thin: each handler parses its
 * input, calls the key service (keys/administration.ts) or usage history and writes the answer;
 * every rule lives in the service. Every route has
 * `auth: 'admin'`: an admin token, the admin quota. The schemas are added first, all of them,
 * in the order of the document's components; the operations follow in the order of its paths.
 */
async function adminRoutes(
  app: AdminApp,
  options: AdminOrdersOptions &
    AdminAuditOptions &
    AdminCustomersOptions &
    AdminTokenRoutesOptions &
    AdminWebhookEndpointsOptions &
    AdminEventsOptions,
): Promise<void> {
  for (const schema of [
    ...KEY_SCHEMAS,
    ...AUDIT_SCHEMAS,
    ...USAGE_SCHEMAS,
    ...ORDER_SCHEMAS,
    ...TOKEN_SCHEMAS,
    ...CUSTOMER_SCHEMAS,
    ...ADMIN_TOKEN_SCHEMAS,
    ...WEBHOOK_ENDPOINT_SCHEMAS,
    ...EVENT_SCHEMAS,
  ])
    app.addSchema(schema)
  keyRoutes(app, options)
  usageRoutes(app, options)
  auditRoutes(app, options)
  orderRoutes(app, options)
  tokenRoutes(app)
  customerRoutes(app, options)
  adminTokenRoutes(app, options)
  webhookEndpointRoutes(app, options)
  eventRoutes(app, options)
}

/**
 * The admin API as one unit for app.ts: the credential of its routes (admin tokens, for the guard
 * auth/guard.ts, routes with `auth: 'admin'`) and `register`, which mounts its document and routes
 * under /admin/v1, and the operator console at /admin/console.
 */
export function adminApi({
  admin,
  usage,
  adminTokens,
  tokens,
  orders,
  auditLog,
  customers,
  webhookEndpoints,
  webhookDeliveries,
  eventLog,
  now,
}: AdminApiOptions): {
  credential: ReturnType<typeof adminTokenCredential>
  register(app: FastifyInstance): Promise<void>
} {
  return {
    credential: adminTokenCredential(tokens),
    async register(app) {
      await registerAdminOpenApi(app)
      await app.register(adminRoutes, {
        prefix: ADMIN_PREFIX,
        admin,
        usage,
        orders,
        auditLog,
        customers,
        webhookEndpoints,
        webhookDeliveries,
        eventLog,
        now,
        adminTokens,
      })
      await registerConsole(app)
    },
  }
}
