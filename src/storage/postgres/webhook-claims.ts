import type pg from 'pg'
import { type DeliveryClaim, firstShare, newDeliveryId } from '../../webhooks/delivery.js'
import type { WebhookEndpointRecord } from '../../webhooks/endpoint.js'
import { eventFilter } from '../../webhooks/fan-out.js'
import {
  ATTEMPT_COLUMNS,
  CLAIMED_COLUMNS,
  type ClaimedRow,
  claimableRetry,
  DELIVERY_COLUMNS,
  type FailingSlots,
  firstClaim,
  isEnabled,
  LOST_ATTEMPT_ERROR,
  notSentError,
  toClaim,
  type WalkedEvent,
} from '../webhook-delivery-row.js'
import { toWebhookEndpointRecord, type WebhookEndpointRow } from '../webhook-endpoint-row.js'
import { readWritersHorizon } from './event-repository.js'

/**
 * The two parts of a claim on PostgreSQL (PostgresWebhookDeliveryRepository.claimDue, in its
 * transaction): the due deliveries, then the endpoints' walks of the log.
 */

/** A walk's deliveries, claimed as they are made (attempt 1, leased until $6); an event that has one already (a replay's) keeps it. */
const INSERT_CLAIMED_DELIVERIES = `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS})
  SELECT id, endpoint_id, event_seq, event_id, event_type, 'pending', 1, $6::bigint, $6::bigint, NULL, NULL, NULL, $7::bigint, $7::bigint
    FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS n (id, endpoint_id, event_seq, event_id, event_type)
  ON CONFLICT (endpoint_id, event_seq) DO NOTHING RETURNING id`

export async function claimRetries(
  client: pg.PoolClient,
  now: number,
  limit: number,
  leaseUntil: number,
  failing: FailingSlots,
): Promise<{ claims: DeliveryClaim[]; notSent: number }> {
  const { rows } = await client.query<ClaimedRow & { updated_at: string }>(
    `SELECT ${CLAIMED_COLUMNS}, d.updated_at FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       JOIN events v ON v.seq = d.event_seq
      WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND ${claimableRetry('$1')}
      ORDER BY d.next_attempt_at LIMIT $2
      FOR UPDATE OF d SKIP LOCKED`,
    [now, limit],
  )
  const claimed = rows.filter((r) => isEnabled(r) && failing.take(r.endpoint_id, r.failing_since !== null))
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
  const notSent = rows.filter((r) => !isEnabled(r)).length
  return { claims: claimed.map((row) => toClaim(row, leaseUntil)), notSent }
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
 * the horizon (readWritersHorizon, read once): every event before it has committed, and no transaction
 * still open can add one there, so a cursor moved to it passes nothing.
 */
export async function claimFirstAttempts(
  client: pg.PoolClient,
  now: number,
  slots: number,
  leaseUntil: number,
  failing: FailingSlots,
): Promise<DeliveryClaim[]> {
  const { rows: endpoints } = await client.query<WebhookEndpointRow & { after_xid: string; after_seq: string }>(
    `SELECT e.*, c.after_xid, c.after_seq FROM webhook_endpoint_cursors c JOIN webhook_endpoints e ON e.id = c.endpoint_id
      WHERE e.enabled ORDER BY c.walked_at, c.endpoint_id FOR UPDATE OF c SKIP LOCKED`,
  )
  if (endpoints.length === 0) return []
  const horizon = await readWritersHorizon(client)
  const walks: Walk[] = endpoints.map((row) => ({
    endpoint: toWebhookEndpointRecord(row),
    xid: BigInt(row.after_xid),
    seq: Number(row.after_seq),
    more: true,
    walked: false,
  }))
  const taken: Array<{ id: string; endpoint: WebhookEndpointRecord; event: WalkedEvent }> = []
  for (const share of [firstShare(slots, walks.length), slots]) {
    const open = walks.filter((w) => w.more && w.xid < horizon && failing.may(w.endpoint.id, w.endpoint.failingSince !== null))
    const limit = Math.min(share, slots - taken.length)
    if (open.length === 0 || limit <= 0) break
    const found = await nextEvents(client, open, horizon, limit)
    for (const walk of open) {
      const events = found.get(walk.endpoint.id) ?? []
      const isFailing = walk.endpoint.failingSince !== null
      const room = slots - taken.length
      const took = events.slice(0, isFailing ? (failing.may(walk.endpoint.id, true) ? Math.min(room, 1) : 0) : room)
      // No slot left for what it found: its cursor stays where it was.
      if (took.length === 0 && events.length > 0) continue
      if (took.length > 0) failing.take(walk.endpoint.id, isFailing)
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
