import type pg from 'pg'
import type { RecordedChange } from '../../changes/audit-log.js'
import {
  type AttemptOutcome,
  type DeliveryAttemptRecord,
  type DeliveryClaim,
  type DeliveryPageFilter,
  firstShare,
  type LoggedEvent,
  type NewDelivery,
  newDeliveryId,
  type QueueStats,
  type RecordedAttempt,
  type ReplayBatch,
  type WebhookDeliveryRecord,
  type WebhookDeliveryRepository,
} from '../../webhooks/delivery.js'
import type { WebhookEndpointRecord } from '../../webhooks/endpoint.js'
import { eventFilter } from '../../webhooks/fan-out.js'
import {
  ATTEMPT_COLUMNS,
  type AttemptRow,
  CLAIMED_COLUMNS,
  type ClaimedRow,
  DELIVERY_COLUMNS,
  type DeliveryRow,
  earliest,
  firstClaim,
  isEnabled,
  LOST_ATTEMPT_ERROR,
  notSentError,
  toAttemptRecord,
  toClaim,
  toDeliveryRecord,
  type WalkedEvent,
} from '../webhook-delivery-row.js'
import { toWebhookEndpointRecord, type WebhookEndpointRow } from '../webhook-endpoint-row.js'
import type { Db } from './connection.js'
import { WRITERS_HORIZON } from './event-repository.js'
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

/** A walk's deliveries, claimed as they are made (attempt 1, leased until $6); an event that has one already (a replay's) keeps it. */
const INSERT_CLAIMED_DELIVERIES = `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS})
  SELECT id, endpoint_id, event_seq, event_id, event_type, 'pending', 1, $6::bigint, $6::bigint, NULL, NULL, NULL, $7::bigint, $7::bigint
    FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS n (id, endpoint_id, event_seq, event_id, event_type)
  ON CONFLICT (endpoint_id, event_seq) DO NOTHING RETURNING id`

/**
 * Deliveries on PostgreSQL: each method one short transaction. The worker's due deliveries and
 * the endpoints' cursors are taken FOR UPDATE SKIP LOCKED: instances running at once each take
 * other rows, none waits for another, and a row is taken by one of them.
 */
export class PostgresWebhookDeliveryRepository implements WebhookDeliveryRepository {
  constructor(private readonly db: Db) {}

  async claimDue(now: number, limit: number, leaseUntil: number): Promise<{ claims: DeliveryClaim[]; notSent: number }> {
    return this.db.transaction(async (client) => {
      const due = await claimRetries(client, now, limit, leaseUntil)
      if (due.claims.length < limit) due.claims.push(...(await claimFirstAttempts(client, now, limit - due.claims.length, leaseUntil)))
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

async function claimRetries(
  client: pg.PoolClient,
  now: number,
  limit: number,
  leaseUntil: number,
): Promise<{ claims: DeliveryClaim[]; notSent: number }> {
  const { rows } = await client.query<ClaimedRow & { updated_at: string }>(
    `SELECT ${CLAIMED_COLUMNS}, d.updated_at FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       JOIN events v ON v.seq = d.event_seq
      WHERE d.status = 'pending' AND d.next_attempt_at <= $1
      ORDER BY d.next_attempt_at LIMIT $2
      FOR UPDATE OF d SKIP LOCKED`,
    [now, limit],
  )
  const claimed = rows.filter(isEnabled)
  for (const row of rows.filter((r) => !isEnabled(r)))
    await client.query(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL, last_error = $1, updated_at = $2
        WHERE id = $3`,
      [notSentError(row), now, row.id],
    )
  for (const row of claimed.filter((r) => r.locked_until !== null))
    await client.query(
      `INSERT INTO webhook_delivery_attempts (${ATTEMPT_COLUMNS}) VALUES ($1, $2, $3, NULL, NULL, $4, NULL) ON CONFLICT DO NOTHING`,
      [row.id, row.attempts, row.updated_at, LOST_ATTEMPT_ERROR],
    )
  if (claimed.length > 0)
    await client.query(
      'UPDATE webhook_deliveries SET attempts = attempts + 1, locked_until = $1, next_attempt_at = $1, updated_at = $2 WHERE id = ANY($3::text[])',
      [leaseUntil, now, claimed.map((r) => r.id)],
    )
  return { claims: claimed.map((row) => toClaim(row, leaseUntil)), notSent: rows.length - claimed.length }
}

/** A walk's position in the log's order (xid, seq); xid8 comes as text. */
interface Walk {
  endpoint: WebhookEndpointRecord
  xid: bigint
  seq: number
  more: boolean
  walked: boolean
}

/**
 * The walks of claimDue: up to `slots` first attempts, the endpoints in turn (firstShare). The
 * cursors are taken FOR UPDATE SKIP LOCKED: a claimer at once walks the others. A walk reads up to
 * the horizon (WRITERS_HORIZON, read once): every event before it has committed, and no transaction
 * still open can add one there, so a cursor moved to it passes nothing.
 */
async function claimFirstAttempts(client: pg.PoolClient, now: number, slots: number, leaseUntil: number): Promise<DeliveryClaim[]> {
  const { rows: endpoints } = await client.query<WebhookEndpointRow & { after_xid: string; after_seq: string }>(
    `SELECT e.*, c.after_xid, c.after_seq FROM webhook_endpoint_cursors c JOIN webhook_endpoints e ON e.id = c.endpoint_id
      WHERE e.enabled ORDER BY c.walked_at, c.endpoint_id FOR UPDATE OF c SKIP LOCKED`,
  )
  if (endpoints.length === 0) return []
  const { rows: read } = await client.query<{ horizon: string }>(`SELECT ${WRITERS_HORIZON} AS horizon`)
  const horizon = BigInt(read[0]!.horizon)
  const walks: Walk[] = endpoints.map((row) => ({
    endpoint: toWebhookEndpointRecord(row),
    xid: BigInt(row.after_xid),
    seq: Number(row.after_seq),
    more: true,
    walked: false,
  }))
  const taken: Array<{ id: string; endpoint: WebhookEndpointRecord; event: WalkedEvent }> = []
  for (const share of [firstShare(slots, walks.length), slots]) {
    const open = walks.filter((w) => w.more && w.xid < horizon)
    const limit = Math.min(share, slots - taken.length)
    if (open.length === 0 || limit <= 0) break
    const found = await nextEvents(client, open, horizon, limit)
    for (const walk of open) {
      const events = found.get(walk.endpoint.id) ?? []
      const took = events.slice(0, slots - taken.length)
      // No slot left for what it found: its cursor stays where it was.
      if (took.length === 0 && events.length > 0) continue
      walk.walked = true
      walk.more = took.length === limit || took.length < events.length
      const last = took[took.length - 1]
      if (walk.more && last !== undefined) {
        walk.xid = BigInt(last.xid)
        walk.seq = Number(last.seq)
      } else {
        walk.xid = horizon
        walk.seq = 0
      }
      for (const event of took) taken.push({ id: newDeliveryId(now), endpoint: walk.endpoint, event })
    }
  }
  let written = new Set<string>()
  if (taken.length > 0) {
    const { rows } = await client.query<{ id: string }>(INSERT_CLAIMED_DELIVERIES, [
      taken.map((t) => t.id),
      taken.map((t) => t.endpoint.id),
      taken.map((t) => t.event.seq),
      taken.map((t) => t.event.id),
      taken.map((t) => t.event.type),
      leaseUntil,
      now,
    ])
    written = new Set(rows.map((r) => r.id))
  }
  const moved = walks.filter((w) => w.walked)
  if (moved.length > 0)
    await client.query(
      `UPDATE webhook_endpoint_cursors c SET after_xid = u.xid::xid8, after_seq = u.seq, walked_at = $4
         FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u (id, xid, seq) WHERE c.endpoint_id = u.id`,
      [moved.map((w) => w.endpoint.id), moved.map((w) => w.xid.toString()), moved.map((w) => w.seq), now],
    )
  // An event that had its delivery already (a replay's) is not claimed here: it is due, and claimed as a retry.
  return taken.filter((t) => written.has(t.id)).map((t) => firstClaim(t.id, leaseUntil, t.endpoint, t.event))
}

/**
 * For each of `walks`, up to `limit` events after its position and before `horizon` that its
 * endpoint receives, in the log's order: one statement for every endpoint (a LATERAL read of the
 * log each, on its (xid, seq) index), so a claim costs one round trip however many endpoints there
 * are. The conditions are eventFilter's, its types joined by commas (no type has one).
 */
async function nextEvents(
  client: pg.PoolClient,
  walks: readonly Walk[],
  horizon: bigint,
  limit: number,
): Promise<Map<string, Array<WalkedEvent & { xid: string }>>> {
  const filters = walks.map((w) => eventFilter(w.endpoint))
  const { rows } = await client.query<WalkedEvent & { xid: string; endpoint_id: string }>(
    `SELECT w.endpoint_id, v.seq, v.xid, v.id, v.type, v.occurred_at, v.data
       FROM unnest($1::text[], $2::text[]::xid8[], $3::bigint[], $4::text[], $5::text[]) WITH ORDINALITY
              AS w (endpoint_id, xid, seq, customer_id, types, n)
       CROSS JOIN LATERAL (
         SELECT v.seq, v.xid, v.id, v.type, v.occurred_at, v.data FROM events v
          WHERE (v.xid, v.seq) > (w.xid, w.seq) AND v.xid < $6::xid8
            AND (w.customer_id IS NULL OR v.customer_id = w.customer_id)
            AND (w.types IS NULL OR v.type = ANY (string_to_array(w.types, ',')))
          ORDER BY v.xid, v.seq LIMIT $7) v
      ORDER BY w.n, v.xid, v.seq`,
    [
      walks.map((w) => w.endpoint.id),
      walks.map((w) => w.xid.toString()),
      walks.map((w) => w.seq),
      filters.map((f) => f.customerId),
      filters.map((f) => (f.types === null ? null : f.types.join(','))),
      horizon.toString(),
      limit,
    ],
  )
  const found = new Map<string, Array<WalkedEvent & { xid: string }>>()
  for (const row of rows) {
    const events = found.get(row.endpoint_id)
    if (events === undefined) found.set(row.endpoint_id, [row])
    else events.push(row)
  }
  return found
}
