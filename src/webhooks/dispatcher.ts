import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Clock } from '../shared/clock.js'
import { PeriodicJob } from '../shared/periodic-job.js'
import type { WebhookDeliveryRepository } from './delivery.js'
import { fanOut } from './fan-out.js'

/**
 * Deliveries one transaction makes at most (the events it takes: this over the enabled endpoints):
 * a batch holds the SQLite writer, and on SQLite the server's event loop, for a few ms (a delivery
 * row is about 8 µs to write there), or its outbox rows' locks on PostgreSQL. A bound in events
 * (500, before) made a batch ten times as long with ten endpoints: 40 ms of requests waiting.
 */
export const DISPATCH_BATCH = 1000
/** Batches per run (up to 200,000 deliveries); what is left is taken by the next run. */
const MAX_BATCHES_PER_RUN = 200
/** How often each server looks for events to fan out: an event's first attempt starts within about this much of its commit. */
export const DISPATCH_INTERVAL_MS = 500

/**
 * The dispatcher: fans the events of the outbox (written beside each event, in its change's
 * transaction, while an endpoint is enabled) out to the endpoints that receive them (fan-out.ts),
 * one delivery each, in batches. Every server runs it; on PostgreSQL instances skip each other's
 * outbox rows (SKIP LOCKED), so an event is fanned out once, and the outbox is read in commit order
 * of its rows, not by a seq cursor: a change that took a lower seq and committed later is not
 * skipped. Never on a request's path.
 */
export class WebhookDispatcher {
  private readonly job: PeriodicJob
  /** Set by stop(): a run in flight ends after its batch (what is left waits in the outbox). */
  private stopping = false

  constructor(
    private readonly deliveries: Pick<WebhookDeliveryRepository, 'dispatch'>,
    private readonly options: { clock: Clock; intervalMs?: number; onError?: (error: unknown) => void; onDispatched?: () => void },
  ) {
    this.job = new PeriodicJob(() => this.dispatch(), {
      intervalMs: options.intervalMs ?? DISPATCH_INTERVAL_MS,
      onError: options.onError,
      runAtStart: true,
    })
  }

  start(): void {
    this.stopping = false
    this.job.start()
  }

  stop(): Promise<void> {
    this.stopping = true
    return this.job.stop()
  }

  /** One run: how many events it fanned out (never rejects; an error goes to onError, the next run tries again). */
  run(): Promise<number> {
    return this.job.run()
  }

  private async dispatch(): Promise<number> {
    let taken = 0
    for (let i = 0; i < MAX_BATCHES_PER_RUN && !this.stopping; i++) {
      // Requests run between batches: on SQLite a batch runs on the event loop, and twenty of them
      // back to back held every request for as long as they took (a p99 of 1 s under a backlog, with ten endpoints).
      if (i > 0) await nextTurn()
      const n = await this.deliveries.dispatch(DISPATCH_BATCH, this.options.clock.now(), fanOut)
      if (n === 0) break
      taken += n
    }
    // New deliveries are due now: the worker need not wait for its next poll.
    if (taken > 0) this.options.onDispatched?.()
    return taken
  }
}
