import type { AdminTokenRepository } from '../admin-tokens/admin-token-repository.js'
import type { AuditRepository } from '../changes/audit-log.js'
import type { CustomerRepository } from '../customers/repository.js'
import type { EventRepository } from '../events/event.js'
import type { KeyRepository } from '../keys/repository.js'
import type { OrderRepository } from '../orders/repository.js'
import type { PetRepository } from '../pets/repository.js'
import type { ScanReportRepository } from '../secret-scanning/repository.js'
import type { UsageRepository } from '../usage/repository.js'
import type { WebhookDeliveryRepository } from '../webhooks/delivery.js'
import type { WebhookEndpointRepository } from '../webhooks/repository.js'

/** One storage engine: the repositories the routes depend on, plus health and lifecycle. */
export interface Storage {
  readonly kind: 'sqlite' | 'postgres'
  readonly pets: PetRepository
  /** Orders, which change the animals' statuses, and the inventory. */
  readonly orders: OrderRepository
  readonly keys: KeyRepository
  /** Tokens of the admin API (hashes only). */
  readonly adminTokens: AdminTokenRepository
  /** Who changed which key, when (append-only; never a secret). */
  readonly audit: AuditRepository
  /** Per-key usage history: minute and hour rows (usage/). */
  readonly usage: UsageRepository
  /** Customers: the owners of keys that share one quota (customers/). */
  readonly customers: CustomerRepository
  /** GitHub's secret scanning reports already acted on, by body hash (secret-scanning/). */
  readonly scanReports: ScanReportRepository
  /** Webhook endpoints: where events are sent, and the secrets that sign them (webhooks/). */
  readonly webhookEndpoints: WebhookEndpointRepository
  /** Webhook deliveries: the outbox's fan-out, the claims and attempts, the delivery log (webhooks/delivery.ts). */
  readonly webhookDeliveries: WebhookDeliveryRepository
  /** The event log (events/): written with the changes (writeChange), read and swept through this. */
  readonly events: EventRepository
  /**
   * A random secret made once for this database (256 bits, migration 019's `service_secrets`,
   * written by the first start that finds none), the same on every instance that uses it and
   * after every restart. Each use derives its own key from it (the entity tags of conditional
   * reads: http/conditional-reads.ts). Never shown, logged or sent.
   */
  readonly serviceSecret: string
  /** Rejects when the engine cannot answer a trivial query (used by /readyz). */
  ping(): Promise<void>
  close(): Promise<void>
}
