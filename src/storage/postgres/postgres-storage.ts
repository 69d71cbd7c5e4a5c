import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { AuditRepository } from '../../changes/audit-log.js'
import type { CustomerRepository } from '../../customers/repository.js'
import type { EventRepository } from '../../events/event.js'
import type { KeyRepository } from '../../keys/repository.js'
import type { OrderRepository } from '../../orders/repository.js'
import type { PetRepository } from '../../pets/repository.js'
import type { ScanReportRepository } from '../../secret-scanning/repository.js'
import type { Clock } from '../../shared/clock.js'
import type { UsageRepository } from '../../usage/repository.js'
import type { WebhookDeliveryRepository } from '../../webhooks/delivery.js'
import type { WebhookEndpointRepository } from '../../webhooks/repository.js'
import { insertServiceSecret, newServiceSecret, SELECT_SERVICE_SECRET } from '../service-secret.js'
import type { Storage } from '../storage.js'
import { StorageFaults } from '../storage-faults.js'
import { PostgresAdminTokenRepository } from './admin-token-repository.js'
import { PostgresAuditRepository } from './audit-repository.js'
import { assertSchemaName, clientConfig, Db, TIMEOUTS, toStorageError } from './connection.js'
import { PostgresCustomerRepository } from './customer-repository.js'
import { PostgresEventRepository } from './event-repository.js'
import { KeyChangeWatcher } from './key-change-watcher.js'
import { PostgresKeyRepository } from './key-repository.js'
import { PostgresOrderRepository } from './order-repository.js'
import { PostgresPetRepository } from './pet-repository.js'
import { PostgresScanReportRepository } from './scan-report-repository.js'
import { PostgresUsageRepository } from './usage-repository.js'
import { PostgresWebhookDeliveryRepository } from './webhook-delivery-repository.js'
import { PostgresWebhookEndpointRepository } from './webhook-endpoint-repository.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))
/** Enough for a request-bound workload (each request holds a connection for one short query). */
const DEFAULT_POOL_SIZE = 10
/** Several instances may start together; the loser waits for the winner's migrations rather than failing. */
const MIGRATION_TIMEOUT_MS = 60_000

export interface PostgresOptions {
  databaseUrl: string
  /** Tables live in this schema (created when missing) instead of the server's default search_path. */
  schema?: string
  poolSize?: number
  /**
   * Where the revocation LISTEN connection goes: undefined = databaseUrl; 'off' = nowhere (the
   * key resolvers' polling alone sees revocations). Behind PgBouncer in transaction mode, a
   * LISTEN through the pooler is lost when its server connection goes back to the pool.
   */
  listenUrl?: string | 'off'
  /**
   * Tests only, to move time: the clock that judges orders' holds. Undefined (always in the
   * service): the database's, which every instance shares (orders/repository.ts).
   */
  holdClock?: Clock
  /**
   * Tests only: how long opening a connection (or waiting for a pooled one) may take. Undefined (always
   * in the service): TIMEOUTS.connectMs. A test process at a lower priority beside busy servers can
   * wait longer than that for the CPU alone, which is not the outage the timeout is there to detect.
   */
  connectTimeoutMs?: number
}

/**
 * Applies each migrations/*.sql file once, in name order, each in its own transaction. Every one
 * of those transactions first takes a transaction-scoped advisory lock (per schema), which
 * serialises instances that start at the same moment and goes away at COMMIT or ROLLBACK, also
 * when this process dies half way. Nothing outlives a transaction (no session lock, no SET), so
 * migrations also run through PgBouncer in transaction pooling mode, where consecutive
 * transactions of one client may run on different server connections.
 */
async function migrate(config: pg.ClientConfig, schema: string | undefined): Promise<void> {
  const client = new pg.Client({ ...config, query_timeout: MIGRATION_TIMEOUT_MS + 1_000 })
  client.on('error', () => {}) // surfaces through the pending query instead
  const lock = `animal_store:migrate:${schema ?? ''}`
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
  try {
    await client.connect()
    for (const file of files) {
      await client.query('BEGIN')
      try {
        // SET LOCAL rather than a startup parameter, which PgBouncer does not pass on: the wait for
        // another instance's lock and a long migration get the longer limit, this transaction only.
        await client.query(`SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}`)
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lock])
        // Under the lock: two concurrent CREATE SCHEMA IF NOT EXISTS can still collide on the catalog.
        if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)')
        const { rowCount } = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [file])
        if (!rowCount) {
          try {
            await client.query(readFileSync(MIGRATIONS_DIR + file, 'utf8'))
          } catch (error) {
            // Unavailability is still recognised through the cause.
            throw new Error(`migration ${file} failed: ${(error as Error).message}`, { cause: error })
          }
          await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [file, Date.now()])
        }
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      }
    }
  } catch (error) {
    throw toStorageError(error)
  } finally {
    await client.end().catch(() => {})
  }
}

/** The database's secret; made first when there is none (of instances making it at once, each reads the one written first). */
async function serviceSecret(db: Db): Promise<string> {
  const [found] = await db.query<{ secret: string }>(SELECT_SERVICE_SECRET)
  if (found !== undefined) return found.secret
  await db.query(insertServiceSecret('postgres'), [newServiceSecret(), Date.now()])
  const [made] = await db.query<{ secret: string }>(SELECT_SERVICE_SECRET)
  return made!.secret
}

export class PostgresStorage implements Storage {
  readonly kind = 'postgres'
  readonly pets: PetRepository
  readonly orders: OrderRepository
  readonly keys: KeyRepository
  readonly adminTokens: PostgresAdminTokenRepository
  readonly audit: AuditRepository
  readonly events: EventRepository
  readonly usage: UsageRepository
  readonly customers: CustomerRepository
  readonly scanReports: ScanReportRepository
  readonly webhookEndpoints: WebhookEndpointRepository
  readonly webhookDeliveries: WebhookDeliveryRepository
  readonly serviceSecret: string
  private readonly db: Db
  private readonly watcher: KeyChangeWatcher | undefined
  /** Every repository's failures go through it: a full disk or a corrupt page shows in ping(). */
  private readonly faults = new StorageFaults(toStorageError)
  private closed = false

  private constructor(
    private readonly pool: pg.Pool,
    listenConfig: pg.ClientConfig | undefined,
    serviceSecret: string,
    holdClock: Clock | undefined,
  ) {
    this.serviceSecret = serviceSecret
    this.db = new Db(pool)
    this.watcher = listenConfig === undefined ? undefined : new KeyChangeWatcher(() => new pg.Client(listenConfig))
    this.pets = this.faults.watch(new PostgresPetRepository(this.db))
    this.orders = this.faults.watch(new PostgresOrderRepository(this.db, holdClock))
    this.keys = this.faults.watch(new PostgresKeyRepository(this.db, this.watcher))
    this.adminTokens = this.faults.watch(new PostgresAdminTokenRepository(this.db))
    this.audit = this.faults.watch(new PostgresAuditRepository(this.db))
    this.usage = this.faults.watch(new PostgresUsageRepository(this.db))
    this.customers = this.faults.watch(new PostgresCustomerRepository(this.db))
    this.scanReports = this.faults.watch(new PostgresScanReportRepository(this.db))
    this.webhookEndpoints = this.faults.watch(new PostgresWebhookEndpointRepository(this.db))
    this.webhookDeliveries = this.faults.watch(new PostgresWebhookDeliveryRepository(this.db))
    this.events = this.faults.watch(new PostgresEventRepository(this.db))
  }

  /** Connects, applies pending migrations, and returns a ready store; StorageUnavailableError when unreachable. */
  static async open({
    databaseUrl,
    schema,
    poolSize = DEFAULT_POOL_SIZE,
    listenUrl,
    holdClock,
    connectTimeoutMs,
  }: PostgresOptions): Promise<PostgresStorage> {
    if (schema !== undefined) assertSchemaName(schema)
    const config = clientConfig(databaseUrl, schema, connectTimeoutMs)
    await migrate(config, schema)
    const pool = new pg.Pool({ ...config, max: poolSize, idleTimeoutMillis: 30_000 })
    // An idle pooled connection that dies (server restart, failover) emits 'error'; unhandled, that
    // would crash the process. The pool already drops it; the next query opens a fresh one.
    pool.on('error', () => {})
    const listenConfig =
      listenUrl === 'off' ? undefined : listenUrl === undefined ? config : clientConfig(listenUrl, schema, connectTimeoutMs)
    try {
      return new PostgresStorage(pool, listenConfig, await serviceSecret(new Db(pool)), holdClock)
    } catch (error) {
      await pool.end().catch(() => {})
      throw error
    }
  }

  /** A read; after a storage fault, a write (see StorageFaults) until one succeeds. */
  async ping(): Promise<void> {
    await this.faults.check(
      () => this.db.query('SELECT 1', [], TIMEOUTS.pingMs),
      // PostgreSQL writes a new row version (and WAL) even for an UPDATE to the same value.
      () =>
        this.db.query(
          'UPDATE schema_migrations SET applied_at = applied_at WHERE version = (SELECT MIN(version) FROM schema_migrations)',
          [],
          TIMEOUTS.pingMs,
        ),
    )
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.watcher?.close()
    await this.pool.end()
  }
}
