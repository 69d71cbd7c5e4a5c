import type { AttemptOutcome } from './delivery.js'

/**
 * What an attempt's answer means, in one place: a 2xx delivers; a 410 gives up and disables the
 * endpoint (the receiver says it is gone for good); anything else (another status, a redirect,
 * which is never followed, a timeout, a network error, a refused address) is a failed attempt,
 * tried again after the schedule's next wait (WEBHOOK_RETRY_SCHEDULE), or given up after its last.
 */

/**
 * Each wait varies by up to this fraction either way, at random: deliveries that failed together
 * (a receiver down for a minute) are not all tried again in the same instant. Svix and Stripe jitter
 * their schedules too; 10% keeps a 5 s wait between 4.5 and 5.5 s.
 */
export const RETRY_JITTER = 0.1

/**
 * The wait (ms) after attempt `attempt` (1 for the first) fails: the schedule's entry for it,
 * jittered; undefined after the last entry (the delivery is given up). `random` is in [0, 1).
 */
export function retryWait(scheduleMs: readonly number[], attempt: number, random: () => number = Math.random): number | undefined {
  const wait = scheduleMs[attempt - 1]
  if (wait === undefined) return undefined
  return Math.max(1, Math.round(wait * (1 + RETRY_JITTER * (2 * random() - 1))))
}

/** What an attempt came to: the receiver's status (null when none answered) and why it failed, if it did. */
export interface AttemptResult {
  statusCode: number | null
  durationMs: number
  error: string | null
  responseExcerpt: string | null
}

export interface RetryRules {
  scheduleMs: readonly number[]
  /** WEBHOOK_DISABLE_AFTER: an endpoint failing for longer than this is disabled. */
  disableAfterMs: number
  random?: () => number
}

export const isSuccess = (statusCode: number | null): boolean => statusCode !== null && statusCode >= 200 && statusCode < 300

/** The delivery's next state and the endpoint's, after attempt `attempt` ended at `now` with `result`. */
export function decideOutcome(
  result: AttemptResult,
  attempt: number,
  now: number,
  rules: RetryRules,
): Pick<AttemptOutcome, 'next' | 'effect'> {
  if (isSuccess(result.statusCode)) return { next: { status: 'delivered', nextAttemptAt: null }, effect: { kind: 'succeeded' } }
  if (result.statusCode === 410) return { next: { status: 'failed', nextAttemptAt: null }, effect: { kind: 'gone' } }
  const wait = retryWait(rules.scheduleMs, attempt, rules.random)
  return {
    next: wait === undefined ? { status: 'failed', nextAttemptAt: null } : { status: 'pending', nextAttemptAt: now + wait },
    effect: { kind: 'failed', disableIfFailingSince: now - rules.disableAfterMs },
  }
}
