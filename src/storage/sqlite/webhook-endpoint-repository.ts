import type Database from 'better-sqlite3'
import type { RecordedChange } from '../../changes/audit-log.js'
import type { WebhookEndpointRecord } from '../../webhooks/endpoint.js'
import type { WebhookEndpointPageFilter, WebhookEndpointRepository, WebhookEndpointUpdate } from '../../webhooks/repository.js'
import {
  toWebhookEndpointRecord,
  updateValues,
  WEBHOOK_ENDPOINT_COLUMNS,
  WEBHOOK_ENDPOINT_UPDATED,
  type WebhookEndpointRow,
  webhookEndpointValues,
} from '../webhook-endpoint-row.js'
import { writeChange } from './write-change.js'

const flag = (enabled: boolean) => (enabled ? 1 : 0)

/**
 * Where an endpoint's walk of the log starts (migration 025): after every event written so far, when
 * it is made and when it is enabled again (what happened while it was disabled is sent by a replay).
 */
const WALK_FROM_HEAD =
  'INSERT OR REPLACE INTO webhook_endpoint_cursors (endpoint_id, after_seq, walked_at) SELECT ?, COALESCE(MAX(seq), 0), 0 FROM events'

/** Webhook endpoints in SQLite: each change one IMMEDIATE transaction with what it records (its audit entry). */
export class SqliteWebhookEndpointRepository implements WebhookEndpointRepository {
  constructor(private readonly db: Database.Database) {}

  async insertEndpoint(record: WebhookEndpointRecord, recorded: RecordedChange): Promise<void> {
    this.db
      .transaction(() => {
        this.db
          .prepare(`INSERT INTO webhook_endpoints (${WEBHOOK_ENDPOINT_COLUMNS}) VALUES (${WEBHOOK_ENDPOINT_COLUMNS.replace(/\w+/g, '?')})`)
          .run(...webhookEndpointValues(record, flag))
        this.db.prepare(WALK_FROM_HEAD).run(record.id)
        writeChange(this.db, recorded)
      })
      .immediate()
  }

  async findEndpointById(id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = this.db.prepare<[string], WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ?').get(id)
    return row && toWebhookEndpointRecord(row)
  }

  async pageEndpoints({ customerId, state, limit, after }: WebhookEndpointPageFilter): Promise<WebhookEndpointRecord[]> {
    const where = ['id > @after']
    if (customerId !== undefined) where.push('customer_id = @customerId')
    if (state !== undefined) where.push('enabled = @enabled')
    return this.db
      .prepare<[Record<string, unknown>], WebhookEndpointRow>(
        `SELECT * FROM webhook_endpoints WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`,
      )
      .all({ after: after ?? '', customerId: customerId ?? null, enabled: state === 'enabled' ? 1 : 0, limit })
      .map(toWebhookEndpointRecord)
  }

  async updateEndpoint(
    id: string,
    expectedUpdatedAt: number,
    update: WebhookEndpointUpdate,
    recorded: RecordedChange,
  ): Promise<WebhookEndpointRecord | undefined> {
    return this.db
      .transaction(() => {
        const before = this.db.prepare<[string], { enabled: number }>('SELECT enabled FROM webhook_endpoints WHERE id = ?').get(id)
        const row = this.db
          .prepare<unknown[], WebhookEndpointRow>(
            `UPDATE webhook_endpoints SET ${WEBHOOK_ENDPOINT_UPDATED.map((c) => `${c} = ?`).join(', ')}
              WHERE id = ? AND updated_at = ? RETURNING *`,
          )
          .get(...updateValues(update, flag), id, expectedUpdatedAt)
        if (row === undefined) return undefined
        if (before?.enabled === 0 && update.enabled) this.db.prepare(WALK_FROM_HEAD).run(id)
        writeChange(this.db, recorded)
        return toWebhookEndpointRecord(row)
      })
      .immediate()
  }

  async deleteEndpoint(
    id: string,
    recorded: (deleted: WebhookEndpointRecord) => RecordedChange,
  ): Promise<WebhookEndpointRecord | undefined> {
    return this.db
      .transaction(() => {
        const row = this.db.prepare<[string], WebhookEndpointRow>('DELETE FROM webhook_endpoints WHERE id = ? RETURNING *').get(id)
        if (row === undefined) return undefined
        const deleted = toWebhookEndpointRecord(row)
        writeChange(this.db, recorded(deleted))
        return deleted
      })
      .immediate()
  }
}
