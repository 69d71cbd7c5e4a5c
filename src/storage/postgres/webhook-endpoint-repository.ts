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
import type { Db } from './connection.js'
import { writeChange } from './write-change.js'

const flag = (enabled: boolean) => enabled

/**
 * Where an endpoint's walk of the log starts (migration 025): after the transactions begun before
 * this one (its xid, seq 0), when it is made and when it is enabled again (what happened while it
 * was disabled is sent by a replay). This transaction writes no event before the cursor is read.
 */
const WALK_FROM_NOW = `INSERT INTO webhook_endpoint_cursors (endpoint_id, after_xid, after_seq, walked_at) VALUES ($1, pg_current_xact_id(), 0, 0)
  ON CONFLICT (endpoint_id) DO UPDATE SET after_xid = excluded.after_xid, after_seq = 0, walked_at = 0`

const INSERT = `INSERT INTO webhook_endpoints (${WEBHOOK_ENDPOINT_COLUMNS}) VALUES (${WEBHOOK_ENDPOINT_COLUMNS.split(', ')
  .map((_, i) => `$${i + 1}`)
  .join(', ')})`

const UPDATE = `UPDATE webhook_endpoints SET ${WEBHOOK_ENDPOINT_UPDATED.map((c, i) => `${c} = $${i + 1}`).join(', ')}
  WHERE id = $${WEBHOOK_ENDPOINT_UPDATED.length + 1} AND updated_at = $${WEBHOOK_ENDPOINT_UPDATED.length + 2} RETURNING *`

/** Webhook endpoints in PostgreSQL: each change one transaction with what it records (its audit entry). */
export class PostgresWebhookEndpointRepository implements WebhookEndpointRepository {
  constructor(private readonly db: Db) {}

  async insertEndpoint(record: WebhookEndpointRecord, recorded: RecordedChange): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query(INSERT, webhookEndpointValues(record, flag))
      await client.query(WALK_FROM_NOW, [record.id])
      await writeChange(client, recorded)
    })
  }

  async findEndpointById(id: string): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await this.db.query<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id])
    return row && toWebhookEndpointRecord(row)
  }

  async pageEndpoints({ customerId, state, limit, after }: WebhookEndpointPageFilter): Promise<WebhookEndpointRecord[]> {
    const values: unknown[] = [after ?? '']
    // COLLATE "C": the same byte order as SQLite's, whatever the database's collation.
    const where = ['id COLLATE "C" > $1']
    if (customerId !== undefined) {
      values.push(customerId)
      where.push(`customer_id = $${values.length}`)
    }
    if (state !== undefined) {
      values.push(state === 'enabled')
      where.push(`enabled = $${values.length}`)
    }
    values.push(limit)
    const rows = await this.db.query<WebhookEndpointRow>(
      `SELECT * FROM webhook_endpoints WHERE ${where.join(' AND ')} ORDER BY id COLLATE "C" LIMIT $${values.length}`,
      values,
    )
    return rows.map(toWebhookEndpointRecord)
  }

  async updateEndpoint(
    id: string,
    expectedUpdatedAt: number,
    update: WebhookEndpointUpdate,
    recorded: RecordedChange,
  ): Promise<WebhookEndpointRecord | undefined> {
    return this.db.transaction(async (client) => {
      const before = await client.query<{ enabled: boolean }>('SELECT enabled FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [id])
      const { rows } = await client.query<WebhookEndpointRow>(UPDATE, [...updateValues(update, flag), id, expectedUpdatedAt])
      const row = rows[0]
      if (row === undefined) return undefined
      if (before.rows[0]?.enabled === false && update.enabled) await client.query(WALK_FROM_NOW, [id])
      await writeChange(client, recorded)
      return toWebhookEndpointRecord(row)
    })
  }

  async deleteEndpoint(
    id: string,
    recorded: (deleted: WebhookEndpointRecord) => RecordedChange,
  ): Promise<WebhookEndpointRecord | undefined> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<WebhookEndpointRow>('DELETE FROM webhook_endpoints WHERE id = $1 RETURNING *', [id])
      const row = rows[0]
      if (row === undefined) return undefined
      const deleted = toWebhookEndpointRecord(row)
      await writeChange(client, recorded(deleted))
      return deleted
    })
  }
}
