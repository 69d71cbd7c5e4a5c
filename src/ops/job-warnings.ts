import { StorageUnavailableError } from '../shared/outages.js'

/** What a job's warning is written to: the process's logger (pino's `warn`). */
export interface WarningLog {
  warn(fields: object, message: string): void
}

/**
 * How a background job's failed run is logged: `message` says what failed and what happens next.
 * A storage outage, which the service rides out (requests are answered 503 meanwhile, /readyz
 * says so, the job's next run tries again), is one line naming the outage, without a stack: the
 * stack of a timeout shows only the driver's internals, and every instance starting together
 * logged one. Any other error (a bug) keeps its stack.
 */
export const jobWarnings =
  (log: WarningLog | undefined) =>
  (message: string) =>
  (error: unknown): void => {
    if (error instanceof StorageUnavailableError) log?.warn({ outage: error.message }, `${message} (${error.message})`)
    else log?.warn({ err: error }, message)
  }
