import type { RecordedChange } from '../../changes/audit-log.js'
import type {
  AttemptOutcome,
  DeliveryAttemptRecord,
  DeliveryClaim,
  DeliveryPageFilter,
  LoggedEvent,
  NewDelivery,
  QueueStats,
  RecordedAttempt,
  ReplayBatch,
  WebhookDeliveryRecord,
  WebhookDeliveryRepository,
} from '../../webhooks/delivery.js'
import type { WebhookEndpointRecord } from '../../webhooks/endpoint.js'
import {
  ATTEMPT_COLUMNS,
  type AttemptRow,
  DELIVERY_COLUMNS,
  type DeliveryRow,
  earliest,
  FailingSlots,
  LEASED_ENDPOINTS,
  toAttemptRecord,
  toDeliveryRecord,
} from '../webhook-delivery-row.js'
import { toWebhookEndpointRecord, type WebhookEndpointRow } from '../webhook-endpoint-row.js'
import type { Db } from './connection.js'
import { claimFirstAttempts, claimRetries } from './webhook-claims.js'
import { writeChange } from './write-change.js'

interface LogRow {
  seq: string
  id: string
  type: LoggedEvent['type']
  customer_id: string | null
}

/** An endpoint's updated_at after a change made at `$n`: later than before, so an update over the old value fails (optimistic). */
const bump = (n: number) => `updated_at = GREATEST(updated_at + 1, $${n})`

/** New deliveries, pending and due at $6, from one array per column: one statement whatever their number. */
const INSERT_DELIVERIES = `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS})
  SELECT id, endpoint_id, event_seq, event_id, event_type, 'pending', 0, $6::bigint, NULL, NULL, NULL, NULL, $6::bigint, $6::bigint
    FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS n (id, endpoint_id, event_seq, event_id, event_type)`

const deliveryArrays = (deliveries: NewDelivery[], now: number): unknown[] => [
  deliveries.map((d) => d.id),
  deliveries.map((d) => d.endpointId),
  deliveries.map((d) => d.event.seq),
  deliveries.map((d) => d.event.id),
  deliveries.map((d) => d.event.type),
  now,
]

/**
 * Deliveries on PostgreSQL: each method one short transaction. The worker's due deliveries and
 * the endpoints' cursors are taken FOR UPDATE SKIP LOCKED: instances running at once each take
 * other rows, none waits for another, and a row is taken by one of them.
 */
export class PostgresWebhookDeliveryRepository implements WebhookDeliveryRepository {
  constructor(private readonly db: Db) {}

  async claimDue(
    now: number,
    limit: number,
    leaseUntil: number,
    failingSlots = limit,
  ): Promise<{ claims: DeliveryClaim[]; notSent: number }> {
    return this.db.transaction(async (client) => {
      const leased = await client.query<{ endpoint_id: string }>(LEASED_ENDPOINTS('$1'), [now])
      const failing = new FailingSlots(failingSlots, new Set(leased.rows.map((r) => r.endpoint_id)))
      const due = await claimRetries(client, now, limit, leaseUntil, failing)
      if (due.claims.length < limit)
        due.claims.push(...(await claimFirstAttempts(client, now, limit - due.claims.length, leaseUntil, failing)))
      return due
    })
  }

  async recordAttempt(outcome: AttemptOutcome, disabled: (endpoint: WebhookEndpointRecord) => RecordedChange): Promise<RecordedAttempt> {
    const { claim, attempt, next, effect, now, endpointId } = outcome
    return this.db.transaction(async (client) => {
      // The delivery may be gone (its endpoint deleted meanwhile): then there is nothing to log it in.
      await client.query(
        `INSERT INTO webhook_delivery_attempts (${ATTEMPT_COLUMNS})
         SELECT $1::text, $2::int, $3::bigint, $4::int, $5::int, $6::text, $7::text WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = $1)
         ON CONFLICT (delivery_id, attempt) DO UPDATE SET started_at = excluded.started_at, duration_ms = excluded.duration_ms,
           status_code = excluded.status_code, error = excluded.error, response_excerpt = excluded.response_excerpt`,
        [
          claim.deliveryId,
          claim.attempt,
          attempt.startedAt,
          attempt.durationMs,
          attempt.statusCode,
          attempt.error,
          attempt.responseExcerpt,
        ],
      )
      const written = await client.query(
        `UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2, locked_until = NULL, last_status_code = $3,
           last_duration_ms = $4, last_error = $5, updated_at = $6
         WHERE id = $7 AND attempts = $8 AND locked_until = $9`,
        [
          next.status,
          next.nextAttemptAt,
          attempt.statusCode,
          attempt.durationMs,
          attempt.error,
          now,
          claim.deliveryId,
          claim.attempt,
          claim.lease,
        ],
      )
      let rows: WebhookEndpointRow[] = []
      if (effect.kind === 'succeeded') {
        await client.query(`UPDATE webhook_endpoints SET failing_since = NULL, ${bump(1)} WHERE id = $2 AND failing_since IS NOT NULL`, [
          now,
          endpointId,
        ])
      } else if (effect.kind === 'failed') {
        await client.query(
          `UPDATE webhook_endpoints SET failing_since = $1, ${bump(1)} WHERE id = $2 AND enabled AND failing_since IS NULL`,
          [now, endpointId],
        )
        ;({ rows } = await client.query<WebhookEndpointRow>(
          `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', ${bump(1)}
            WHERE id = $2 AND enabled AND failing_since < $3 RETURNING *`,
          [now, endpointId, effect.disableIfFailingSince],
        ))
      } else if (effect.kind === 'gone') {
        ;({ rows } = await client.query<WebhookEndpointRow>(
          `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone', ${bump(1)} WHERE id = $2 AND enabled RETURNING *`,
          [now, endpointId],
        ))
      }
      const endpoint = rows[0] && toWebhookEndpointRecord(rows[0])
      if (endpoint !== undefined) await writeChange(client, disabled(endpoint))
      return { stateWritten: written.rowCount === 1, disabled: endpoint }
    })
  }

  async pageDeliveries({ endpointId, limit, before }: DeliveryPageFilter): Promise<WebhookDeliveryRecord[]> {
    const rows = await this.db.query<DeliveryRow>(
      'SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 AND event_seq < $2 ORDER BY event_seq DESC LIMIT $3',
      [endpointId, before ?? Number.MAX_SAFE_INTEGER, limit],
    )
    return rows.map(toDeliveryRecord)
  }

  async findDelivery(
    endpointId: string,
    deliveryId: string,
  ): Promise<{ delivery: WebhookDeliveryRecord; attempts: DeliveryAttemptRecord[] } | undefined> {
    const [row] = await this.db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [
      deliveryId,
      endpointId,
    ])
    if (row === undefined) return undefined
    const attempts = await this.db.query<AttemptRow>('SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt', [
      deliveryId,
    ])
    return { delivery: toDeliveryRecord(row), attempts: attempts.map(toAttemptRecord) }
  }

  async retryDelivery(
    endpointId: string,
    deliveryId: string,
    now: number,
    recorded: RecordedChange,
  ): Promise<WebhookDeliveryRecord | undefined> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<DeliveryRow>(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, locked_until = NULL, updated_at = $1
          WHERE id = $2 AND endpoint_id = $3 RETURNING *`,
        [now, deliveryId, endpointId],
      )
      if (rows[0] === undefined) return undefined
      await writeChange(client, recorded)
      return toDeliveryRecord(rows[0])
    })
  }

  async replayBatch(batch: ReplayBatch, recorded: RecordedChange): Promise<{ enqueued: number; lastSeq: number; done: boolean }> {
    const { endpoint, since, afterSeq, uptoSeq, limit, now, fanOut } = batch
    return this.db.transaction(async (client) => {
      const params: unknown[] = [afterSeq, uptoSeq, since, limit]
      let customer = ''
      if (endpoint.customerId !== null) {
        params.push(endpoint.customerId)
        customer = ` AND customer_id = $${params.length}`
      }
      const { rows } = await client.query<LogRow>(
        `SELECT seq, id, type, customer_id FROM events WHERE seq > $1 AND seq <= $2 AND occurred_at >= $3${customer} ORDER BY seq LIMIT $4`,
        params,
      )
      const events = rows.map((r) => ({ seq: Number(r.seq), id: r.id, type: r.type, customerId: r.customer_id }))
      const deliveries = fanOut(events, [endpoint], now)
      if (deliveries.length > 0)
        await client.query(
          `${INSERT_DELIVERIES} ON CONFLICT (endpoint_id, event_seq) DO UPDATE SET status = 'pending',
             next_attempt_at = excluded.next_attempt_at, locked_until = NULL, updated_at = excluded.updated_at`,
          deliveryArrays(deliveries, now),
        )
      await writeChange(client, recorded)
      const done = rows.length < limit
      return { enqueued: deliveries.length, lastSeq: done ? uptoSeq : Number(rows[rows.length - 1]!.seq), done }
    })
  }

  async replayRange(from: number): Promise<{ afterSeq: number; uptoSeq: number }> {
    const [first] = await this.db.query<{ seq: string }>('SELECT seq FROM events WHERE occurred_at >= $1 ORDER BY occurred_at LIMIT 1', [
      from,
    ])
    const [last] = await this.db.query<{ seq: string }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM events')
    const upto = Number(last!.seq)
    return { afterSeq: first === undefined ? upto : Number(first.seq) - 1, uptoSeq: upto }
  }

  async queueStats(): Promise<QueueStats> {
    const [pending] = await this.db.query<{ n: string; oldest: string | null }>(
      "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'",
    )
    // The endpoint furthest behind: the events after its cursor, and when the first of them occurred.
    const [behind] = await this.db.query<{ n: string; oldest: string | null }>(
      `WITH cursor AS (SELECT c.after_xid AS xid, c.after_seq AS seq FROM webhook_endpoint_cursors c
                         JOIN webhook_endpoints e ON e.id = c.endpoint_id WHERE e.enabled ORDER BY c.after_xid, c.after_seq LIMIT 1)
       SELECT (SELECT COUNT(*) FROM events v WHERE (v.xid, v.seq) > (cursor.xid, cursor.seq)) AS n,
              (SELECT occurred_at FROM events v WHERE (v.xid, v.seq) > (cursor.xid, cursor.seq) ORDER BY v.xid, v.seq LIMIT 1) AS oldest
         FROM cursor`,
    )
    return {
      pending: Number(pending!.n),
      oldestPendingAt: earliest(pending!.oldest, behind?.oldest ?? null),
      undispatched: Number(behind?.n ?? 0),
    }
  }
}
