import type Database from 'better-sqlite3'
import type { AuditRepository } from '../../changes/audit-log.js'
import { type Durability, sqliteFilename } from '../../config/config.js'
import type { CustomerRepository } from '../../customers/repository.js'
import type { EventRepository } from '../../events/event.js'
import type { KeyRepository } from '../../keys/repository.js'
import type { OrderRepository } from '../../orders/repository.js'
import type { PetRepository } from '../../pets/repository.js'
import type { ScanReportRepository } from '../../secret-scanning/repository.js'
import { type Clock, systemClock } from '../../shared/clock.js'
import type { UsageRepository } from '../../usage/repository.js'
import type { WebhookDeliveryRepository } from '../../webhooks/delivery.js'
import type { WebhookEndpointRepository } from '../../webhooks/repository.js'
import { insertServiceSecret, newServiceSecret, SELECT_SERVICE_SECRET } from '../service-secret.js'
import type { Storage } from '../storage.js'
import { StorageFaults } from '../storage-faults.js'
import { SqliteAdminTokenRepository } from './admin-token-repository.js'
import { SqliteAuditRepository } from './audit-repository.js'
import { CatalogueClock } from './catalogue-clock.js'
import { SqliteCustomerRepository } from './customer-repository.js'
import { SqliteEventRepository } from './event-repository.js'
import { SqliteKeyRepository } from './key-repository.js'
import { openMigrated } from './open-database.js'
import { SqliteOrderRepository } from './order-repository.js'
import { SqlitePetRepository } from './pet-repository.js'
import { SqliteScanReportRepository } from './scan-report-repository.js'
import { toSqliteStorageError } from './sqlite-errors.js'
import { prepareSqliteFile } from './sqlite-file.js'
import { SqliteUsageRepository } from './usage-repository.js'
import { SqliteWebhookDeliveryRepository } from './webhook-delivery-repository.js'
import { SqliteWebhookEndpointRepository } from './webhook-endpoint-repository.js'

export interface SqliteOptions {
  databaseUrl: string
  durability: Durability
  /** The clock that judges orders' holds (default the system's): the machine's that holds the file (orders/repository.ts). */
  holdClock?: Clock
}

export class SqliteStorage implements Storage {
  readonly kind = 'sqlite'
  readonly pets: PetRepository
  readonly orders: OrderRepository
  readonly keys: KeyRepository
  readonly adminTokens: SqliteAdminTokenRepository
  readonly audit: AuditRepository
  readonly events: EventRepository
  readonly usage: UsageRepository
  readonly customers: CustomerRepository
  readonly scanReports: ScanReportRepository
  readonly webhookEndpoints: WebhookEndpointRepository
  readonly webhookDeliveries: WebhookDeliveryRepository
  readonly serviceSecret: string
  private readonly db: Database.Database
  /** Every repository's failures go through it: a full disk or a corrupt page is a 503 and shows in ping(). */
  private readonly faults = new StorageFaults(toSqliteStorageError)

  /** Throws UnusableFileError, with the cause, when the file cannot be created, opened, written or migrated. */
  constructor({ databaseUrl, durability, holdClock = systemClock }: SqliteOptions) {
    const name = sqliteFilename(databaseUrl)
    const filename = name === ':memory:' || name === '' ? name : prepareSqliteFile(name)
    this.db = openMigrated(filename, durability)
    this.serviceSecret = serviceSecret(this.db)
    // Shared: pets' inserts and orders' changes both tell the caches of this process what they committed.
    const catalogue = new CatalogueClock(this.db)
    this.pets = this.faults.watch(new SqlitePetRepository(this.db, catalogue))
    this.orders = this.faults.watch(new SqliteOrderRepository(this.db, catalogue, holdClock))
    this.keys = this.faults.watch(new SqliteKeyRepository(this.db))
    this.adminTokens = this.faults.watch(new SqliteAdminTokenRepository(this.db))
    this.audit = this.faults.watch(new SqliteAuditRepository(this.db))
    this.usage = this.faults.watch(new SqliteUsageRepository(this.db))
    this.customers = this.faults.watch(new SqliteCustomerRepository(this.db))
    this.scanReports = this.faults.watch(new SqliteScanReportRepository(this.db))
    this.webhookEndpoints = this.faults.watch(new SqliteWebhookEndpointRepository(this.db))
    this.webhookDeliveries = this.faults.watch(new SqliteWebhookDeliveryRepository(this.db))
    this.events = this.faults.watch(new SqliteEventRepository(this.db))
  }

  /** A read; after a storage fault, a write (see StorageFaults) until one succeeds. */
  async ping(): Promise<void> {
    await this.faults.check(
      () => this.db.prepare('SELECT 1').get(),
      () => this.probeWrite(),
    )
  }

  /**
   * A commit that changes nothing but must reach the disk: one row moved and moved back in one
   * transaction. (Rewriting a row with its own value would not do: SQLite then leaves the page
   * alone, and such an UPDATE succeeds on a full disk.)
   */
  private probeWrite(): void {
    const move = this.db.prepare<[number]>(
      'UPDATE schema_migrations SET applied_at = applied_at + ? WHERE version = (SELECT MIN(version) FROM schema_migrations)',
    )
    this.db
      .transaction(() => {
        move.run(1)
        move.run(-1)
      })
      .immediate()
  }

  /** For tests and the fault suite: SQLite's own consistency check. */
  integrityCheck(): string {
    return this.db.pragma('integrity_check', { simple: true }) as string
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close()
  }
}

/** The database's secret; made first when there is none, under the write lock (IMMEDIATE: another process may be making it too). */
function serviceSecret(db: Database.Database): string {
  const select = db.prepare<[], { secret: string }>(SELECT_SERVICE_SECRET)
  const found = select.get()
  if (found !== undefined) return found.secret
  return db
    .transaction(() => {
      db.prepare(insertServiceSecret('sqlite')).run(newServiceSecret(), Date.now())
      return select.get()!.secret
    })
    .immediate()
}
