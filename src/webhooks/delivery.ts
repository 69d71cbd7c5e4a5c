import type { RecordedChange } from '../changes/audit-log.js'
import type { EventType } from '../events/event-types.js'
import { timeOrderedId } from '../shared/base62.js'
import type { WebhookEndpointRecord } from './endpoint.js'

/**
 * Webhook deliveries: one per event and endpoint, made when its first attempt is claimed. Each
 * enabled endpoint walks the event log from its cursor: a claim of the delivery worker takes, for
 * its free slots, the next events an endpoint receives (fan-out.ts' rule), writes their deliveries
 * already claimed and moves the cursor past them. A delivery is attempted until a 2xx answer or
 * the end of the retry schedule, each attempt in its log. So a delivery row exists only for an
 * attempt made: an endpoint that cannot keep up (a dead one holds its slots WEBHOOK_TIMEOUT_MS per
 * attempt) falls behind in the log, and costs nothing per event written. Times are Unix ms.
 */

/** `pending`: an attempt is due at nextAttemptAt (or one is in flight); `delivered`: a 2xx answered; `failed`: given up (the schedule ended, the receiver is gone, the endpoint disabled). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/**
 * A delivery's id: `dlv_` and 24 base62 characters, the time it was made and 16 random ones
 * (timeOrderedId, like an event's), or 16 random ones for a delivery made before ids sorted by time.
 * Time-ordered so that new rows go at the end of the id's index: a random id put each into a
 * random page of it, which at 200,000 deliveries was half of what a delivery cost to write on
 * SQLite (14 µs a row against 8 µs, and growing with the table).
 */
export const WEBHOOK_DELIVERY_ID_PATTERN = '^dlv_[0-9A-Za-z]{16}(?:[0-9A-Za-z]{8})?$'
export const newDeliveryId = (now: number): string => timeOrderedId('dlv_', now)

export interface WebhookDeliveryRecord {
  id: string
  endpointId: string
  /** The event's position in the log: the listing's order and cursor. */
  eventSeq: number
  eventId: string
  eventType: EventType
  status: DeliveryStatus
  /** Attempts made (or begun: one in flight counts). */
  attempts: number
  /** When the next attempt is due (while one is in flight: when its lease ends, so that another is made if it is lost); null unless pending. */
  nextAttemptAt: number | null
  lastStatusCode: number | null
  lastDurationMs: number | null
  lastError: string | null
  createdAt: number
  updatedAt: number
}

/** One attempt of a delivery, as its log keeps it. */
export interface DeliveryAttemptRecord {
  /** 1, 2, … in the order made. */
  attempt: number
  startedAt: number
  /** Null for an attempt whose outcome was never recorded (the instance making it stopped). */
  durationMs: number | null
  /** The receiver's answer, or null: none came (timeout, network error, a refused address). */
  statusCode: number | null
  error: string | null
  /** The first characters of the receiver's answer (RESPONSE_EXCERPT_CHARS), for the operator. */
  responseExcerpt: string | null
}

/** An event of the log, as the fan-out reads it. */
export interface LoggedEvent {
  seq: number
  id: string
  type: EventType
  customerId: string | null
}

/** A delivery to make (a replay's). */
export interface NewDelivery {
  id: string
  endpointId: string
  event: LoggedEvent
}

/** Given events and endpoints, the deliveries to make (fan-out.ts). */
export type FanOut = (events: readonly LoggedEvent[], endpoints: readonly WebhookEndpointRecord[], now: number) => NewDelivery[]

/**
 * How a claim shares `slots` free slots among the enabled endpoints, walked in turn (the one that
 * took events longest ago first): each is offered its share first, then the endpoints that had more
 * take what the others left, in the same order. So one endpoint with a backlog gets every free slot,
 * and ten get one each, whatever is waiting for the first.
 */
export const firstShare = (slots: number, endpoints: number): number => Math.max(1, Math.ceil(slots / Math.max(1, endpoints)))

/** What an attempt needs: the delivery, its endpoint's URL and secrets, its event as stored. */
export interface DeliveryClaim {
  deliveryId: string
  /** This attempt's number (the delivery's attempts, counting it). */
  attempt: number
  /** The lease this claim holds until: the token its outcome is recorded under. */
  lease: number
  /** Whether its endpoint was failing when it was claimed (WebhookDeliveryRepository.claimDue's failing slots). */
  failing: boolean
  endpoint: Pick<WebhookEndpointRecord, 'id' | 'url' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>
  /** The event: `data` is the JSON text as written (int64 exact), sent as it is. */
  event: { id: string; type: EventType; occurredAt: number; data: string }
}

/** What an attempt's answer means for its endpoint. */
export type EndpointEffect =
  /** A 2xx: the endpoint is not failing (failing_since cleared). */
  | { kind: 'succeeded' }
  /** A failed attempt: failing since now unless already; disabled (`failing`) when failing since before `disableIfFailingSince`. */
  | { kind: 'failed'; disableIfFailingSince: number }
  /** A 410: the receiver is gone; the endpoint is disabled (`gone`). */
  | { kind: 'gone' }
  /** No answer to judge the endpoint by (the attempt was interrupted by a stop): nothing changes. */
  | { kind: 'none' }

/** The outcome of one attempt, for the store to record. */
export interface AttemptOutcome {
  claim: Pick<DeliveryClaim, 'deliveryId' | 'attempt' | 'lease'>
  endpointId: string
  attempt: Omit<DeliveryAttemptRecord, 'attempt'>
  /** The delivery's next state: delivered, failed, or pending again at nextAttemptAt. */
  next: { status: DeliveryStatus; nextAttemptAt: number | null }
  effect: EndpointEffect
  now: number
}

/** What recording an attempt did. */
export interface RecordedAttempt {
  /** False when the claim's lease was lost (another claim, a retry): the attempt is in the log, the delivery's state is the other's. */
  stateWritten: boolean
  /** The endpoint, when this attempt disabled it. */
  disabled: WebhookEndpointRecord | undefined
}

/** Deliveries a page of the log shows: `limit` + 1 to tell whether another page follows. */
export interface DeliveryPageFilter {
  endpointId: string
  limit: number
  /** Event seq cursor: deliveries of older events than it (the listing is newest first). */
  before?: number
}

export interface QueueStats {
  /** Deliveries pending (due, waiting for a retry, or in flight). */
  pending: number
  /** When the oldest pending delivery was made, or the oldest event an enabled endpoint has not reached occurred, if earlier; null when there is neither. */
  oldestPendingAt: number | null
  /** Events written that some enabled endpoint's walk has not reached (the one furthest behind), whether it receives them or not. */
  undispatched: number
}

/** One batch of a replay: the events after `afterSeq` (up to `uptoSeq`) that occurred at or after `since`. */
export interface ReplayBatch {
  endpoint: WebhookEndpointRecord
  since: number
  afterSeq: number
  uptoSeq: number
  limit: number
  now: number
  fanOut: FanOut
}

/**
 * Storage of deliveries (implemented by each store; `Storage.webhookDeliveries`). Every method is
 * one short transaction: no transaction is open while a receiver is called.
 */
export interface WebhookDeliveryRepository {
  /**
   * Claims up to `limit` attempts at `now`, each leased until `leaseUntil` (its next attempt moved
   * there: a claim lost with its instance is due again then), in one transaction: first the due
   * deliveries, oldest due first, each one's attempts counted up (a due delivery of a disabled
   * endpoint is not claimed but failed, `not sent`: how many, `notSent`; a claim whose lease had
   * lapsed logs that attempt as one without an outcome); then, for the slots left, the first
   * attempts of the events the enabled endpoints have not been offered yet: the endpoints take
   * turns (firstShare), each walks the log from its cursor to the next events it receives, writes
   * their deliveries already claimed (attempt 1; an event that already has one, a replay's, is
   * skipped) and moves its cursor past them. On PostgreSQL, claimers at once skip each other's
   * deliveries and endpoints (SKIP LOCKED), and a walk reads only the events that no transaction
   * still open can come before (the log's horizon): each attempt is claimed by one, and no event
   * is passed over.
   *
   * An endpoint that is failing (its last attempt failed: `failingSince` set) has at most one
   * attempt leased at a time, across every server, and the claim takes at most `failingSlots`
   * attempts to failing endpoints (all `limit` when not given): one that never answers holds one
   * slot for WEBHOOK_TIMEOUT_MS, not all of them, and the healthy endpoints keep the rest.
   */
  claimDue(now: number, limit: number, leaseUntil: number, failingSlots?: number): Promise<{ claims: DeliveryClaim[]; notSent: number }>
  /**
   * Records an attempt's outcome: the attempt in the log (always), the delivery's next state (only
   * while the claim still holds its lease), and its effect on the endpoint (failing since, cleared,
   * disabled with `disabled`'s record: its event and audit entry, in the same transaction).
   */
  recordAttempt(outcome: AttemptOutcome, disabled: (endpoint: WebhookEndpointRecord) => RecordedChange): Promise<RecordedAttempt>
  /** A page of an endpoint's deliveries, newest event first. */
  pageDeliveries(filter: DeliveryPageFilter): Promise<WebhookDeliveryRecord[]>
  findDelivery(
    endpointId: string,
    deliveryId: string,
  ): Promise<{ delivery: WebhookDeliveryRecord; attempts: DeliveryAttemptRecord[] } | undefined>
  /** Makes a delivery pending and due at `now` (whatever its status; an attempt in flight loses its lease), with its record; undefined when there is none. */
  retryDelivery(endpointId: string, deliveryId: string, now: number, recorded: RecordedChange): Promise<WebhookDeliveryRecord | undefined>
  /**
   * One batch of a replay, in one transaction: each event of the batch that the endpoint receives
   * (fanOut) made pending and due now, as a new delivery or its existing one; `recorded` written
   * with it. How many deliveries it enqueued, the last seq it read, and whether the walk is done.
   */
  replayBatch(batch: ReplayBatch, recorded: RecordedChange): Promise<{ enqueued: number; lastSeq: number; done: boolean }>
  /**
   * Where a replay since `from` (Unix ms) walks the log: after `afterSeq`, the seq before the first
   * event that occurred at or after `from` (found on the occurred_at index), up to `uptoSeq`, the
   * newest event now. Both 0 when the log is empty.
   */
  replayRange(from: number): Promise<{ afterSeq: number; uptoSeq: number }>
  queueStats(): Promise<QueueStats>
}
