import type { RecordedChange } from '../changes/audit-log.js'
import type { EventType } from '../events/event-types.js'
import { timeOrderedId } from '../shared/base62.js'
import type { WebhookEndpointRecord } from './endpoint.js'

/**
 * Webhook deliveries: one per event and endpoint that receives it, made by the dispatcher from the
 * events not yet fanned out (the outbox, written beside each event in its change's transaction),
 * attempted by the delivery worker until a 2xx answer or the end of the retry schedule, each
 * attempt in its log. Times are Unix ms.
 */

/** `pending`: an attempt is due at nextAttemptAt (or one is in flight); `delivered`: a 2xx answered; `failed`: given up (the schedule ended, the receiver is gone, the endpoint disabled). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/**
 * A delivery's id: `dlv_` and 24 base62 characters, the time it was made and 16 random ones
 * (timeOrderedId, like an event's), or 16 random ones for a delivery made before ids sorted by time.
 * Time-ordered because the dispatcher writes a row per event and endpoint: a random id put each
 * into a random page of the id's index, which at 200,000 pending deliveries was half of what a
 * delivery cost to write on SQLite (14 µs a row against 8 µs, and growing with the table).
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

/** An event of the outbox, as the fan-out reads it. */
export interface OutboxEvent {
  seq: number
  id: string
  type: EventType
  customerId: string | null
}

/** A delivery to make (the dispatcher's, a replay's). */
export interface NewDelivery {
  id: string
  endpointId: string
  event: OutboxEvent
}

/** How many events a dispatch batch takes (WebhookDeliveryRepository.dispatch): at most `maxDeliveries` deliveries' worth. */
export const dispatchEventLimit = (maxDeliveries: number, enabledEndpoints: number): number =>
  Math.max(1, Math.floor(maxDeliveries / Math.max(1, enabledEndpoints)))

/** Given events and the endpoints enabled `now`, the deliveries to make (fan-out.ts). */
export type FanOut = (events: readonly OutboxEvent[], endpoints: readonly WebhookEndpointRecord[], now: number) => NewDelivery[]

/** What an attempt needs: the delivery, its endpoint's URL and secrets, its event as stored. */
export interface DeliveryClaim {
  deliveryId: string
  /** This attempt's number (the delivery's attempts, counting it). */
  attempt: number
  /** The lease this claim holds until: the token its outcome is recorded under. */
  lease: number
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
  /** When the oldest pending delivery was made; null when none is pending. */
  oldestPendingAt: number | null
  /** Events not yet fanned out to the endpoints. */
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
   * Fans out events of the outbox, oldest first: each to the deliveries `fanOut` makes of it with
   * the endpoints enabled now, and takes it out of the outbox, in one transaction. It takes as many
   * events as can make at most `maxDeliveries` deliveries however they fan out (`maxDeliveries`
   * over the number of enabled endpoints, at least one; all `maxDeliveries` when none is enabled),
   * so that a batch's transaction stays short however many endpoints there are. On PostgreSQL,
   * events another instance is fanning out are skipped (SKIP LOCKED) and an event's outbox row is
   * seen once its change has committed, whatever its seq: no event is missed nor fanned out twice.
   * How many events it took.
   */
  dispatch(maxDeliveries: number, now: number, fanOut: FanOut): Promise<number>
  /**
   * Claims up to `limit` deliveries due at `now`, oldest due first: each one's attempts counted up
   * and leased until `leaseUntil` (its next attempt moved there: a claim lost with its instance is
   * due again then). Deliveries another instance is claiming are skipped. A due delivery of a
   * disabled endpoint is not claimed but failed (`not sent`: how many, `notSent`). A claim whose
   * lease had lapsed logs that attempt as one without an outcome.
   */
  claimDue(now: number, limit: number, leaseUntil: number): Promise<{ claims: DeliveryClaim[]; notSent: number }>
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
