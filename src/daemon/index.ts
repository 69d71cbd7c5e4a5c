/**
 * A background job of the server process: a poll, a flush or a sweep on a timer. Its rules (what
 * one run does, how often) live in its feature module; the daemon only starts and stops it.
 */
export interface Job {
  /** What it is, for a reader of the list (the key-change poll, the usage flush, …). */
  readonly name: string
  /** Starts its timer; resolves once it is ready to serve (the key-change poll's first read). */
  start(): void | Promise<void>
  /** Stops its timer, waits for its run in flight and writes what it holds; never rejects. */
  stop(): Promise<void>
}

/**
 * The one owner of a process's background jobs (Ozone's daemon): started once, whatever listeners
 * the process has, and stopped once, in the reverse order, before the limiter and storage close:
 * the sweeps first, then the recorders write their last batches, then the key-change poll ends.
 * A second start or stop is the first one's.
 */
export class Daemon {
  private started: Promise<void> | undefined
  private stopped: Promise<void> | undefined

  constructor(readonly jobs: readonly Job[]) {}

  /** After a stop: nothing (a job started then would never be stopped). */
  start(): Promise<void> {
    if (this.stopped !== undefined) return this.started ?? Promise.resolve()
    this.started ??= (async () => {
      for (const job of this.jobs) await job.start()
    })()
    return this.started
  }

  /** Also after a start that failed: every job is stopped (a job never started stops at once). */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      await this.started?.catch(() => {})
      for (const job of [...this.jobs].reverse()) await job.stop()
    })()
    return this.stopped
  }
}
