import { createHash } from 'node:crypto'
import type { Clock } from '../shared/clock.js'
import { PeriodicJob } from '../shared/periodic-job.js'
import type { ScanReportRepository } from './repository.js'

/**
 * How long a report's copies are answered without being acted on: a day, as Idempotency-Key
 * records are kept. GitHub documents no retry schedule; a day outlasts any plausible retry of one
 * delivery, and a copy after it is acted on again: at most one more `key.leak_reported` entry per
 * report and day.
 */
export const REPORT_RETENTION_MS = 24 * 60 * 60 * 1000
/** How often each instance deletes the reports past the retention. */
export const REPORT_SWEEP_MS = 10 * 60 * 1000
/**
 * A report claimed this long ago and never answered was abandoned (the process acting on it died):
 * its next copy is acted on. Longer than GitHub waits for an answer (30 s at most).
 */
export const ABANDONED_CLAIM_MS = 60_000

/** A report is the bytes GitHub signed: the same bytes are the same report. */
export const reportHash = (body: Buffer): string => createHash('sha256').update(body).digest('hex')

export type Label = 'true_positive' | 'false_positive'

/** The labels of an answer as stored: one character per token (repository.ts). */
export const encodeLabels = (labels: readonly Label[]): string => labels.map((l) => (l === 'true_positive' ? 't' : 'f')).join('')
export const decodeLabels = (stored: string): Label[] => [...stored].map((c) => (c === 't' ? 'true_positive' : 'false_positive'))

/**
 * Deletes the reports past REPORT_RETENTION_MS: at start, then every REPORT_SWEEP_MS (every
 * instance may: a delete is idempotent). Started and stopped by app.ts with the other jobs.
 */
export const reportSweep = (reports: Pick<ScanReportRepository, 'deleteReports'>, clock: Clock, onError: (error: unknown) => void) =>
  new PeriodicJob(() => reports.deleteReports(clock.now() - REPORT_RETENTION_MS), {
    intervalMs: REPORT_SWEEP_MS,
    onError,
    runAtStart: true,
  })
