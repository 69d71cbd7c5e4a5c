/**
 * The drain before a graceful stop: from a stop signal, /readyz answers 503 while every request is
 * still served, for SHUTDOWN_DRAIN_MS, so that a load balancer's health checks take the instance
 * out before it stops accepting connections; only then does the server close.
 */
export class Drain {
  private startedAt: number | undefined

  get draining(): boolean {
    return this.startedAt !== undefined
  }

  /** Resolves after `ms`; /readyz is 503 from now on. */
  async start(ms: number): Promise<void> {
    this.startedAt ??= Date.now()
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
  }
}
