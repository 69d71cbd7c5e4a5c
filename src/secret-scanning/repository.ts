/**
 * What became of a report, by the SHA-256 of its body's bytes: `claimed`, this request is the one
 * to act on it (first seen, or a claim abandoned mid-way taken over); `answered`, acted on already,
 * with the labels it was answered with; `in_flight`, another request is acting on it now.
 */
export type ReportClaim = { outcome: 'claimed' } | { outcome: 'answered'; labels: string } | { outcome: 'in_flight' }

/**
 * The secret scanning reports GitHub has sent, shared by every instance, so that a copy of one
 * (GitHub's retry, or a replay) is answered without being acted on twice (github-reports.ts).
 * No token is stored: only the body's hash and the answer's labels, one character per token in the
 * report's order (`t` true_positive, `f` false_positive).
 */
export interface ScanReportRepository {
  /**
   * In one statement: claims the report for this request at `now` when no row has its hash, or when
   * its row was claimed before `abandonedBefore` and never answered (the process acting on it died);
   * otherwise tells what became of it.
   */
  claimReport(hash: string, now: number, abandonedBefore: number): Promise<ReportClaim>
  /** The labels a claimed report was answered with: its copies get them from now on. */
  answerReport(hash: string, labels: string): Promise<void>
  /** Gives up a claim that was not answered (acting on it failed): the next copy is acted on. */
  releaseReport(hash: string): Promise<void>
  /** Deletes the reports claimed before `before`; resolves with how many. */
  deleteReports(before: number): Promise<number>
}
