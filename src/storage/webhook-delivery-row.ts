import type { EventType } from '../events/event-types.js'
import type { DeliveryAttemptRecord, DeliveryClaim, DeliveryStatus, NewDelivery, WebhookDeliveryRecord } from '../webhooks/delivery.js'
import type { WebhookEndpointRecord } from '../webhooks/endpoint.js'

/** The rows of migration 023 as both stores return them (int8 columns may come back as text from PostgreSQL). */

type Int = number | string
const int = (value: Int) => Number(value)
const intOrNull = (value: Int | null) => (value === null ? null : Number(value))

export interface DeliveryRow {
  id: string
  endpoint_id: string
  event_seq: Int
  event_id: string
  event_type: EventType
  status: DeliveryStatus
  attempts: Int
  next_attempt_at: Int | null
  locked_until: Int | null
  last_status_code: Int | null
  last_duration_ms: Int | null
  last_error: string | null
  created_at: Int
  updated_at: Int
}

export const toDeliveryRecord = (r: DeliveryRow): WebhookDeliveryRecord => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventSeq: int(r.event_seq),
  eventId: r.event_id,
  eventType: r.event_type,
  status: r.status,
  attempts: int(r.attempts),
  nextAttemptAt: intOrNull(r.next_attempt_at),
  lastStatusCode: intOrNull(r.last_status_code),
  lastDurationMs: intOrNull(r.last_duration_ms),
  lastError: r.last_error,
  createdAt: int(r.created_at),
  updatedAt: int(r.updated_at),
})

export interface AttemptRow {
  attempt: Int
  started_at: Int
  duration_ms: Int | null
  status_code: Int | null
  error: string | null
  response_excerpt: string | null
}

export const toAttemptRecord = (r: AttemptRow): DeliveryAttemptRecord => ({
  attempt: int(r.attempt),
  startedAt: int(r.started_at),
  durationMs: intOrNull(r.duration_ms),
  statusCode: intOrNull(r.status_code),
  error: r.error,
  responseExcerpt: r.response_excerpt,
})

/** A claimed delivery joined with its event and endpoint (CLAIMED_COLUMNS). */
export interface ClaimedRow {
  id: string
  attempts: Int
  locked_until: Int | null
  endpoint_id: string
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Int | null
  enabled: number | boolean
  disabled_reason: string | null
  failing_since: Int | null
  event_id: string
  event_type: EventType
  occurred_at: Int
  data: string
}

/** The columns of a due delivery, its endpoint (e) and its event (v), that a claim reads. */
export const CLAIMED_COLUMNS = `d.id, d.attempts, d.locked_until, d.endpoint_id, e.url, e.secret, e.previous_secret,
  e.previous_secret_expires_at, e.enabled, e.disabled_reason, e.failing_since, d.event_id, d.event_type, v.occurred_at, v.data`

/** A claim of `row`, leased until `lease`, counting one more attempt than the row had. */
export const toClaim = (row: ClaimedRow, lease: number): DeliveryClaim => ({
  deliveryId: row.id,
  attempt: int(row.attempts) + 1,
  lease,
  failing: row.failing_since !== null,
  endpoint: {
    id: row.endpoint_id,
    url: row.url,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: intOrNull(row.previous_secret_expires_at),
  },
  event: { id: row.event_id, type: row.event_type, occurredAt: int(row.occurred_at), data: row.data },
})

export const isEnabled = (row: Pick<ClaimedRow, 'enabled'>) => row.enabled === true || row.enabled === 1

/** Why a due delivery of a disabled endpoint is failed without an attempt. */
export const notSentError = (row: Pick<ClaimedRow, 'disabled_reason'>) =>
  `not sent: the endpoint is disabled (${row.disabled_reason ?? 'manual'})`

/** What a claim logs for an attempt whose lease lapsed before its outcome was recorded. */
export const LOST_ATTEMPT_ERROR = 'no outcome recorded: the instance making this attempt stopped, or lost its lease'

export const DELIVERY_COLUMNS =
  'id, endpoint_id, event_seq, event_id, event_type, status, attempts, next_attempt_at, locked_until, last_status_code, last_duration_ms, last_error, created_at, updated_at'

/** A new delivery's values in DELIVERY_COLUMNS' order: pending, due `now`. */
export const newDeliveryValues = (d: NewDelivery, now: number): unknown[] => [
  d.id,
  d.endpointId,
  d.event.seq,
  d.event.id,
  d.event.type,
  'pending',
  0,
  now,
  null,
  null,
  null,
  null,
  now,
  now,
]

export const ATTEMPT_COLUMNS = 'delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt'

/** An event as an endpoint's walk of the log reads it (migration 025). */
export interface WalkedEvent {
  seq: Int
  id: string
  type: EventType
  occurred_at: Int
  data: string
}

/** The claim of a walk's new delivery `id`, of `event` to `endpoint`: its first attempt, leased until `lease`. */
export const firstClaim = (
  id: string,
  lease: number,
  endpoint: Pick<WebhookEndpointRecord, 'id' | 'url' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince'>,
  event: WalkedEvent,
): DeliveryClaim => ({
  deliveryId: id,
  attempt: 1,
  lease,
  failing: endpoint.failingSince !== null,
  endpoint: {
    id: endpoint.id,
    url: endpoint.url,
    secret: endpoint.secret,
    previousSecret: endpoint.previousSecret,
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
  },
  event: { id: event.id, type: event.type, occurredAt: int(event.occurred_at), data: event.data },
})

/** The earlier of two times, either of which may be missing. */
export const earliest = (a: Int | null, b: Int | null): number | null =>
  a === null ? intOrNull(b) : b === null ? int(a) : Math.min(int(a), int(b))

/**
 * The rule of claimDue for failing endpoints, as a claim goes: at most `slots` attempts to failing
 * endpoints, one per endpoint, none to one that has an attempt leased already (`leased`).
 */
export class FailingSlots {
  private readonly taken = new Set<string>()
  private left: number

  constructor(
    slots: number,
    private readonly leased: ReadonlySet<string>,
  ) {
    this.left = slots
  }

  /** Whether an attempt to `endpointId` (failing or not) may be claimed now. */
  may(endpointId: string, failing: boolean): boolean {
    return !failing || (this.left > 0 && !this.taken.has(endpointId) && !this.leased.has(endpointId))
  }

  /** Whether an attempt to `endpointId` may be claimed now; a yes for a failing one takes its slot. */
  take(endpointId: string, failing: boolean): boolean {
    if (!this.may(endpointId, failing)) return false
    if (failing) {
      this.left--
      this.taken.add(endpointId)
    }
    return true
  }
}

/**
 * The due deliveries a claim may take (both stores, their placeholders given): a healthy or
 * disabled endpoint's (the latter to be failed unsent), and a failing endpoint's while it has no
 * attempt leased (FailingSlots keeps the claim itself to one each).
 */
export const claimableRetry = (leasedAfter: string) => `(e.failing_since IS NULL OR NOT e.enabled
    OR NOT EXISTS (SELECT 1 FROM webhook_deliveries x WHERE x.endpoint_id = d.endpoint_id AND x.locked_until > ${leasedAfter}))`

/** The endpoints with an attempt leased after `?`/`$n` (migration 025's partial index). */
export const LEASED_ENDPOINTS = (after: string) =>
  `SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE locked_until IS NOT NULL AND locked_until > ${after}`
