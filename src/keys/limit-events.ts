import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ChangeRecorder } from '../changes/change-recorder.js'
import { type EventDraft, type EventOwner, eventDraft } from '../events/event.js'
import type { LimitDecision } from '../limits/limiter.js'
import type { ApiKeyRecord } from './api-key.js'
import { keyEventOwner } from './api-key.js'

/** The shares of a day window that are told, each once per window: `key.usage_threshold`. */
export const USAGE_THRESHOLDS = [80, 100] as const

const DAY_S = 86_400
const iso = (ms: number) => new Date(ms).toISOString()
const NO_OWNER: EventOwner = { customerId: null, keyChainId: null, keyId: null }

/** What the guard decided of a request, as far as these events need it. */
export interface LimitedRequest {
  /** The limiter identity the request was counted against (a customer's, a key chain's quota, or an address). */
  identity: string
  decision: LimitDecision
  /** The key, for a keyed request; none for an address limited without a valid one. */
  key?: ApiKeyRecord
}

/**
 * The events the limiter's answers tell, decided from the decision the guard already has, after
 * the answer is sent (never on the request's path, never failing it):
 * - `key.usage_threshold`: the day window of a key's quota (its customer's, or its chain's) passed
 *   80% or 100%, once per window and threshold. Exact with several instances: the event's once-key
 *   (identity, window start, threshold) is unique in the store, so the instances that see the same
 *   crossing write one event between them; each instance also remembers what it wrote, so a busy
 *   quota costs one write per threshold and window, not one per request.
 * - `key.banned`: a ban started (the limiter says so on exactly the request that started it),
 *   once per ban (its once-key: identity and start).
 * A write that fails is told to `onError` and not retried: the request it came from was answered.
 */
export class LimitEvents {
  /** identity:threshold -> the window start (Unix s) its event was written for, by this instance. */
  private readonly told = new Map<string, number>()
  private readonly pending = new Set<Promise<void>>()

  constructor(
    private readonly recorder: Pick<ChangeRecorder, 'record'>,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** The events `request` tells, if any, written in the background. */
  observe({ identity, decision, key }: LimitedRequest): void {
    const events: EventDraft[] = []
    const owner = key === undefined ? NO_OWNER : keyEventOwner(key)
    const { day } = decision
    const windowStart = day.resetAt - DAY_S
    const used = day.limit - day.remaining
    if (key !== undefined && day.limit > 0)
      for (const threshold of USAGE_THRESHOLDS) {
        const slot = `${identity}:${threshold}`
        if (used * 100 < threshold * day.limit || this.told.get(slot) === windowStart) continue
        this.told.set(slot, windowStart)
        const data = {
          quotaId: key.customerId ?? key.quotaId,
          customerId: key.customerId,
          keyId: key.id,
          window: 'day',
          threshold,
          limit: day.limit,
          used,
          windowStart: iso(windowStart * 1000),
          resetAt: iso(day.resetAt * 1000),
        }
        events.push(eventDraft('key.usage_threshold', owner, decision.now, data, `usage_threshold:${identity}:${windowStart}:${threshold}`))
      }
    if (decision.banStarted === true) {
      const data = {
        quotaId: key === undefined ? null : (key.customerId ?? key.quotaId),
        customerId: key?.customerId ?? null,
        keyId: key?.id ?? null,
        address: key === undefined ? identity.slice(identity.indexOf(':') + 1) : null,
        until: iso(decision.now + decision.retryAfter * 1000),
      }
      events.push(eventDraft('key.banned', owner, decision.now, data, `banned:${identity}:${decision.now}`))
    }
    if (events.length === 0) return
    if (this.told.size > 100_000) this.told.clear()
    const write = this.recorder
      .record({ audit: [], events })
      .catch(this.onError)
      .finally(() => this.pending.delete(write))
    this.pending.add(write)
  }

  /** Resolves when every write started so far has ended (a server's stop waits for them). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending])
  }
}

/** The onResponse hook that hands each limited request's decision to `events`. */
export function limitEventsHook(events: LimitEvents, addressIdentity: (request: FastifyRequest) => string) {
  return (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    const admission = request.admission
    if (admission?.kind === 'apiKey' && admission.usage !== 'uncounted')
      events.observe({ identity: admission.limits.identity, decision: admission.decision, key: admission.key })
    else if (admission?.kind === 'anonymous' && admission.decision.banStarted === true)
      events.observe({ identity: addressIdentity(request), decision: admission.decision })
    done()
  }
}
