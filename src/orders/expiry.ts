import { PeriodicJob } from '../shared/periodic-job.js'
import type { OrderRepository } from './repository.js'

/** Orders one transaction expires: a batch never holds the SQLite writer or many row locks for long. */
export const EXPIRY_BATCH = 100
/** Batches per run; what is left is expired by the next run (or by a change that needs it). */
const MAX_BATCHES_PER_RUN = 50

export interface OrderExpiryOptions {
  intervalMs: number
  onError?: (error: unknown) => void
}

/**
 * The sweep: every ORDER_SWEEP_MS, expires the placed orders whose hold ran out, each with its
 * animal (available again), in batches. Every instance runs it; each expiry happens once however
 * many run at the same moment, because it is a conditional update of a placed order
 * (orders/state.ts), and on PostgreSQL the instances skip the orders another one is expiring.
 * Which holds ran out, the store's clock says (repository.ts), so every instance's sweep agrees.
 */
export class OrderExpiry {
  private readonly job: PeriodicJob

  constructor(
    private readonly orders: Pick<OrderRepository, 'expireDue'>,
    options: OrderExpiryOptions,
  ) {
    this.job = new PeriodicJob(() => this.sweep(), options)
  }

  start(): void {
    this.job.start()
  }

  stop(): Promise<void> {
    return this.job.stop()
  }

  /** One run: the orders it expired (never rejects; an error goes to onError, the next run tries again). */
  run(): Promise<number> {
    return this.job.run()
  }

  private async sweep(): Promise<number> {
    let expired = 0
    for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
      const n = await this.orders.expireDue(EXPIRY_BATCH)
      expired += n
      if (n < EXPIRY_BATCH) break
    }
    return expired
  }
}
