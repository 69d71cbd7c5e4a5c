import { type ChangeRecorder, withEvents } from '../changes/change-recorder.js'
import { eventDraft } from '../events/event.js'
import type { Clock } from '../shared/clock.js'
import type { AttemptOutcome, DeliveryClaim, WebhookDeliveryRepository } from './delivery.js'
import type { WebhookEndpointRecord } from './endpoint.js'
import { endpointAuditDetails, endpointDocument } from './endpoint-document.js'
import { type AttemptResult, decideOutcome, type RetryRules } from './retries.js'
import { webhookBody, webhookHeaders } from './signing.js'

/**
 * How often each server looks for due deliveries and new events when nothing woke it sooner (an
 * attempt's end wakes it): an event's first attempt starts within about this much of its commit.
 */
export const DELIVERY_POLL_MS = 500
/**
 * A claim's lease beyond the attempt's own timeout: time to record its outcome. A lease that lapses
 * (its instance stopped, or stalled that long) makes the delivery due again, for any instance.
 */
export const LEASE_MARGIN_MS = 10_000

/**
 * The slots of a worker's WEBHOOK_CONCURRENCY that attempts to failing endpoints may hold: half
 * (at least one). With the store's one attempt at a time per failing endpoint (claimDue), endpoints
 * that never answer hold at most these, each for WEBHOOK_TIMEOUT_MS, and the endpoints that answer
 * keep the other half, however many fail.
 */
export const failingShare = (concurrency: number): number => Math.max(1, Math.floor(concurrency / 2))

/** How an attempt, or a delivery not sent, ended: the label of animal_store_webhook_deliveries_total. */
export type DeliveryOutcomeLabel = 'delivered' | 'failed_attempt' | 'gave_up' | 'gone' | 'not_sent' | 'interrupted'

/** The actor of what the delivery changes by itself (an endpoint disabled), on the audit log. */
export const DELIVERY_ACTOR = { type: 'system', id: 'webhook-delivery' } as const

export interface DeliveryWorkerOptions {
  clock: Clock
  /** WEBHOOK_CONCURRENCY: attempts in flight at once, at most. */
  concurrency: number
  /** WEBHOOK_TIMEOUT_MS: an attempt's bound (the sender's), which the lease covers. */
  timeoutMs: number
  rules: RetryRules
  /** One attempt (sender.ts' sendWebhook with the destination rules; a test's own), ended early when `signal` aborts (a stop). */
  send: (url: string, headers: Record<string, string>, body: string, signal: AbortSignal) => Promise<AttemptResult>
  /** The maker of the audit entry of an endpoint the delivery disables. */
  recorder: Pick<ChangeRecorder, 'change'>
  intervalMs?: number
  onOutcome?: (outcome: DeliveryOutcomeLabel) => void
  onError?: (error: unknown) => void
}

/**
 * The delivery worker: claims attempts for its free slots (WEBHOOK_CONCURRENCY), the due retries
 * and then the first attempts of the events the endpoints have not been sent yet (claimDue: each
 * endpoint walks the log), makes each attempt with no transaction open, then records its outcome
 * (the attempt's log, the delivery's next state, the endpoint's failing or disabled state) in one
 * short transaction. Every server runs one; a claim is exclusive (SKIP LOCKED on PostgreSQL, the
 * write lock on SQLite) and leased, so each attempt is made by one instance, and a lease lost with
 * its instance (kill -9) makes the delivery due again for any. Never on a request's path: a dead
 * receiver holds a slot here for WEBHOOK_TIMEOUT_MS at most, and the events it has not taken wait
 * in the log, costing nothing until they are.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined
  private wakeTimer: NodeJS.Timeout | undefined
  private wakeAt = Number.POSITIVE_INFINITY
  private stopped = true
  private polling: Promise<number> | undefined
  private pollAgain = false
  private readonly inFlight = new Set<Promise<void>>()
  /** The attempts in flight to endpoints that were failing when claimed (failingShare). */
  private failingInFlight = 0
  /** Ends the attempts in flight when the worker stops: a stop never waits for a slow receiver. */
  private aborts = new AbortController()

  constructor(
    private readonly deliveries: Pick<WebhookDeliveryRepository, 'claimDue' | 'recordAttempt'>,
    private readonly options: DeliveryWorkerOptions,
  ) {}

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.aborts = new AbortController()
    this.timer = setInterval(() => this.wake(), this.options.intervalMs ?? DELIVERY_POLL_MS)
    this.timer.unref()
    this.wake()
  }

  /**
   * Claims no more, interrupts the attempts in flight and waits for them to be recorded: each is
   * logged as interrupted and due again at once, for this server's next start or another instance.
   */
  async stop(): Promise<void> {
    this.stopped = true
    this.aborts.abort()
    clearInterval(this.timer)
    clearTimeout(this.wakeTimer)
    this.timer = undefined
    this.wakeTimer = undefined
    await this.polling
    await Promise.all(this.inFlight)
  }

  /** A poll now (or right after the one running): new deliveries are due. */
  wake(): void {
    if (this.stopped) return
    void this.poll()
  }

  /** One poll: claims up to the free slots and starts their attempts; how many it claimed. Never rejects. */
  poll(): Promise<number> {
    if (this.polling !== undefined) {
      this.pollAgain = true
      return this.polling
    }
    this.polling = this.claim()
      .catch((error: unknown) => {
        this.options.onError?.(error)
        return 0
      })
      .finally(() => {
        this.polling = undefined
        if (this.pollAgain && !this.stopped) {
          this.pollAgain = false
          void this.poll()
        }
      })
    return this.polling
  }

  /** For tests: polls until nothing is due now and nothing is in flight. */
  async settle(): Promise<void> {
    for (;;) {
      const claimed = await this.poll()
      if (this.inFlight.size > 0) await Promise.race(this.inFlight)
      else if (claimed === 0) return
    }
  }

  private async claim(): Promise<number> {
    const free = this.options.concurrency - this.inFlight.size
    if (free <= 0) return 0
    const now = this.options.clock.now()
    const failingFree = Math.max(0, failingShare(this.options.concurrency) - this.failingInFlight)
    const { claims, notSent } = await this.deliveries.claimDue(now, free, now + this.options.timeoutMs + LEASE_MARGIN_MS, failingFree)
    for (let i = 0; i < notSent; i++) this.options.onOutcome?.('not_sent')
    for (const claim of claims) {
      if (claim.failing) this.failingInFlight++
      const attempt = this.attempt(claim)
        .catch((error: unknown) => this.options.onError?.(error))
        .finally(() => {
          if (claim.failing) this.failingInFlight--
          this.inFlight.delete(attempt)
          // A slot is free: fill it from what is due now.
          this.wake()
        })
      this.inFlight.add(attempt)
    }
    return claims.length
  }

  private async attempt(claim: DeliveryClaim): Promise<void> {
    const { clock, rules } = this.options
    const startedAt = clock.now()
    const body = webhookBody(claim.event)
    const { signal } = this.aborts
    const result = await this.options.send(claim.endpoint.url, webhookHeaders(claim, body, startedAt), body, signal)
    const now = clock.now()
    // Stopped before an answer: not the receiver's failure, so no wait and nothing said of the endpoint.
    const interrupted = signal.aborted && result.statusCode === null
    const { next, effect } = interrupted
      ? { next: { status: 'pending' as const, nextAttemptAt: now }, effect: { kind: 'none' as const } }
      : decideOutcome(result, claim.attempt, now, rules)
    const outcome: AttemptOutcome = {
      claim,
      endpointId: claim.endpoint.id,
      attempt: { startedAt, ...result },
      next,
      effect,
      now,
    }
    await this.deliveries.recordAttempt(outcome, (endpoint) => this.disabledRecord(endpoint, now))
    this.options.onOutcome?.(outcomeLabel(effect.kind, next.status))
    if (next.nextAttemptAt !== null) this.wakeBy(next.nextAttemptAt - now)
  }

  /** A retry due sooner than the next poll (a short schedule): a poll then. */
  private wakeBy(ms: number): void {
    if (this.stopped || ms >= (this.options.intervalMs ?? DELIVERY_POLL_MS)) return
    const at = this.options.clock.now() + ms
    if (at >= this.wakeAt) return
    clearTimeout(this.wakeTimer)
    this.wakeAt = at
    this.wakeTimer = setTimeout(
      () => {
        this.wakeAt = Number.POSITIVE_INFINITY
        this.wake()
      },
      Math.max(0, ms),
    )
    this.wakeTimer.unref()
  }

  /** What disabling an endpoint records: its `webhook_endpoint.disabled` event and an audit entry by the delivery. */
  private disabledRecord(endpoint: WebhookEndpointRecord, now: number) {
    const audit = this.options.recorder.change({ actor: DELIVERY_ACTOR }, now, {
      action: 'webhook_endpoint.update',
      details: { ...endpointAuditDetails(endpoint), changed: ['enabled'] },
    })
    const owner = { customerId: endpoint.customerId, keyChainId: null, keyId: null }
    return withEvents(audit, eventDraft('webhook_endpoint.disabled', owner, now, endpointDocument(endpoint)))
  }
}

function outcomeLabel(effect: AttemptOutcome['effect']['kind'], next: AttemptOutcome['next']['status']): DeliveryOutcomeLabel {
  if (effect === 'succeeded') return 'delivered'
  if (effect === 'gone') return 'gone'
  if (effect === 'none') return 'interrupted'
  return next === 'failed' ? 'gave_up' : 'failed_attempt'
}
